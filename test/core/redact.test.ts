/**
 * Secrets never stored (core/redact): each kind masked, with near misses that ordinary text is
 * full of (hashes, UUIDs, base64 in code, the word "password" in prose) left alone; `<private>`
 * spans; the three modes; what a plan or a digest would add.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { guardModelOutput } from '../../src/core/model-output/model-output.js';
import { SECRET_PATTERNS } from '../../src/core/redact/patterns.js';
import { maskSecrets, newSecretKinds, redactForWrite, refuseNewSecrets, secretKinds, stripPrivate } from '../../src/core/redact/redact.js';
import { redactFields } from '../../src/core/redact/stored-text.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { CATALOGUE } from '../helpers/secret-catalogue.js';
import { AWS_ID, expectedKinds, j, POSITIVES } from '../helpers/secret-samples.js';

/** Ordinary text that must come out exactly as it went in. */
const NEGATIVES: string[] = [
  'commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it; sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'request id 123e4567-e89b-12d3-a456-426614174000',
  'const data = "SGVsbG8sIFdvcmxkIQ=="; // base64 in code',
  'img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"',
  'The password is rotated monthly; reset your password: click the link in the email.',
  'Password: reset it through the admin panel',
  'password = the one in the vault',
  'if (password == confirm) return;',
  'const token = req.headers.token;',
  `password: \${DB_PASSWORD}`,
  'api_key: <your key here>',
  'token: ****',
  'password=',
  'max_tokens=4096 and token_count=12; the tokenizer splits words',
  '{"max_token": 512,\n "timeout": 30}',
  'we use the openai sk-learn style; task-force-alpha-bravo-charlie-delta',
  'sk-this-is-a-long-branch-name-without-digits',
  'Asia and AKIA in prose, AKIAshort',
  'https://example.com:8080/path?q=1 and https://user@example.com/x',
  'postgres://user:password@localhost/db is the example in the docs',
  'the file starts with BEGIN PRIVATE KEY in its header, as prose',
  'hf_hub_download(repo_id) and hf_transfer',
  'a Bearer token goes in the header (Bearer <token>)',
  'eyJ alone is not a JWT, nor eyJhbGciOi.short',
  'helm_chart_version lm_short',
  'key: value and monkey: banana',
  'See the [redacted: github-token] left by an earlier note.',
  // Look-alikes of the formats added after the second red-team pass (issue 28).
  'redis://cache.internal:6379/0 and amqp://mq.example.com:5672/ need no password',
  'mysql -u root -p app_db (it prompts for the password); mysql --port=3306 -h db',
  'sshpass -e ssh deploy@host reads SSHPASS; docker login --password-stdin registry.example.com',
  'Basic setup: Basic authentication is on, and Authorization: Basic <credentials> is the header',
  'curl -u $USER:$API_TOKEN https://x.example.com and curl -u bob: https://y.example.com',
  'cd /srv && pwd; PWD=/home/bob OLDPWD=/tmp; pwd: /srv/app',
  'machine learning: the login page asks for a password reset',
  'openssl enc -pass env:MYPASS -in a -out b',
  'SG.short, pypi-upload, ya29.short, xapp-x and glptt-x are too short to be keys',
  'the meeting is at 12:30:00; build 123456789:AA-short',
  'https://discord.com/channels/123/456 is a channel, not a webhook',
  // Look-alikes of the catalogue's formats (issue 39): words, paths, hashes and flags that share a prefix.
  'ask the task desk; SKU-1234 and SKIP_TESTS=1; the key-value store; pat.ts in the path; dapi docs',
  'secret scanning flagged commit 3f786850e387550fdab836ed7e6dc881de23001b; aws s3 sync ./dist s3://bucket',
  'the aws secret is in the vault: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf',
  'psql --password (it prompts); use the --token flag or --token-file; docker login --password-stdin; --secret) marks a correction',
  `pass it with --token <token>, --password "$DB_PASSWORD" or --api-key \${API_KEY}`,
  'Authorization: required for every call; the Authorization header carries a Bearer <token>',
  'curl -H "Content-Type: application/json" -H "X-Request-Id: 123e4567-e89b-12d3-a456-426614174000" https://api.example.com',
  'Discord bot notes: the bot id is 123456789012345678 and the guild is Nzk0.channel',
  'the EAAA rating, ATBB and ATTA as acronyms, hvs. the vault prefix, dp.st. for doppler, AGE-SECRET-KEY-1 alone',
  'const progressToken = extra._meta?.progressToken; secret: secretFlag, readonly needsToken: boolean,',
  'LIVE_MEM_LLM_API_KEY=sk-… and "LIVE_MEM_TOKEN": "lm_…reviewer" in the docs',
  `<secretName>tls-cert</secretName> is a name; <token>\${CI_TOKEN}</token> a reference`,
  'Private-Lines: is a PuTTY header; Public-Lines: 2 follows',
  'sha256 base64 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= of an empty file, the secret of good docs',
  '[API](https://docs.aws.amazon.com/AWSJavaScriptSDK/v3/latest/client/s3/command/PutBucketCorsCommand/) and aws s3/command/PutBucketCorsCommand/Input123 in the docs',
];

describe('redact: each kind of secret', () => {
  for (const sample of POSITIVES) {
    const [kind, text, secret] = sample;
    it(`masks ${kind}: ${text.slice(0, 40).replace(/\n/g, ' ')}…`, () => {
      const masked = maskSecrets(text);
      assert.ok(!masked.text.includes(secret), masked.text);
      assert.ok(masked.text.includes(`[redacted: ${kind}]`), masked.text);
      assert.deepEqual(masked.redacted, expectedKinds(sample));
    });
  }

  it('keeps the structure around a secret: the key, the quotes, the user and host of a URL', () => {
    assert.equal(maskSecrets('password=hunter2').text, 'password=[redacted: password]');
    assert.equal(maskSecrets('"password": "p@ss"').text, '"password": "[redacted: password]"');
    assert.equal(maskSecrets('postgres://admin:s3cr3t@db:5432/app').text, 'postgres://admin:[redacted: url-password]@db:5432/app');
  });

  it('names a secret by its most specific kind where two overlap, and counts each kind', () => {
    const gh = j('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');
    const masked = maskSecrets(`GITHUB_TOKEN=${gh}\npassword=one\npassword=two`);
    assert.equal(masked.text, 'GITHUB_TOKEN=[redacted: github-token]\npassword=[redacted: password]\npassword=[redacted: password]');
    assert.deepEqual(masked.redacted, [
      { kind: 'github-token', count: 1 },
      { kind: 'password', count: 2 },
    ]);
  });

  it('every pattern kind has a positive case here or in the catalogue', () => {
    const tested = new Set([...POSITIVES.map(([kind]) => kind), ...CATALOGUE.map(({ kind }) => kind)]);
    for (const pattern of SECRET_PATTERNS) assert.ok(tested.has(pattern.kind), pattern.kind);
  });
});

describe('redact: ordinary text is left alone', () => {
  for (const text of NEGATIVES) {
    it(`leaves: ${text.slice(0, 50)}`, () => {
      const masked = maskSecrets(text);
      assert.equal(masked.text, text);
      assert.deepEqual(masked.redacted, []);
    });
  }
});

describe('redact: linear-time patterns', () => {
  it('no pattern repeats a group that itself holds a quantifier (no nested quantifiers)', () => {
    const nested = /\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)[*+{]/;
    for (const pattern of SECRET_PATTERNS) assert.doesNotMatch(pattern.regex.source, nested, pattern.kind);
  });

  it('handles 100,000-character adversarial runs of every prefix without losing text', () => {
    const runs = [
      'eyJ'.repeat(34_000),
      'a:'.repeat(50_000),
      '-----BEGIN PRIVATE KEY-----'.repeat(3_800),
      'sk-'.repeat(34_000),
      'x://a:'.repeat(17_000),
      'password='.repeat(11_200),
      '<private>'.repeat(11_200),
      'A'.repeat(100_000),
      'mysql -u '.repeat(11_000),
      'machine a login b '.repeat(5_500),
      'login x\n'.repeat(12_500),
      `Basic ${'QUJD'.repeat(25_000)}`,
      'curl -u a:'.repeat(10_000),
      `${AWS_ID},`.repeat(4_700),
      // The catalogue's shapes (issue 39): context words, flags, headers, PuTTY headers, XML elements, bare prefixes.
      'aws '.repeat(25_000),
      `secret ${'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6h'} `.repeat(2_000),
      '--token x1 '.repeat(9_000),
      'X-API-Key: '.repeat(9_000),
      'Authorization: Token '.repeat(5_000),
      'Private-Lines: 999\n'.repeat(5_000),
      '<password>a</passwor'.repeat(5_000),
      'mongosh -p '.repeat(9_000),
      'hvs.'.repeat(25_000),
      'EAA'.repeat(33_000),
      'abcdefghijklmn.atlasv1.'.repeat(4_000),
    ];
    for (const run of runs) {
      const masked = maskSecrets(run);
      assert.ok(masked.text.length > 0);
    }
    assert.equal(stripPrivate('<private>'.repeat(11_200)).text, '');
  });
});

describe('redact: <private>', () => {
  it('removes every span, case-insensitive, over lines, and counts them', () => {
    const result = stripPrivate('a <private>one\ntwo</private> b <PRIVATE>three</Private> c');
    assert.equal(result.text, 'a  b  c');
    assert.equal(result.removed, 2);
  });

  it('an unclosed <private> hides everything after it; nested tags are counted; a stray closing tag is dropped', () => {
    assert.deepEqual(stripPrivate('keep <private>hide\nall of this'), { text: 'keep ', removed: 1 });
    assert.deepEqual(stripPrivate('a<private>x<private>y</private>z</private>b'), { text: 'ab', removed: 1 });
    assert.deepEqual(stripPrivate('a</private>b'), { text: 'ab', removed: 0 });
  });
});

describe('redact: modes', () => {
  const text = 'deploy with DB_PASSWORD=hunter2 <private>my pin is 1234</private>';

  it('mask: secrets masked, <private> removed, both counted', () => {
    assert.deepEqual(redactForWrite(text, 'mask', 'the note'), {
      text: 'deploy with DB_PASSWORD=[redacted: password] ',
      redacted: [{ kind: 'password', count: 1 }],
      private_removed: 1,
    });
  });

  it('refuse: invalid_input naming the kinds, never the secret', () => {
    assert.throws(
      () => redactForWrite(text, 'refuse', 'the note'),
      (error: unknown) => isLiveMemError(error, 'invalid_input') && /password ×1/.test(error.message) && !error.message.includes('hunter2'),
    );
    // What <private> holds is no reason to refuse: it is never stored.
    assert.equal(redactForWrite('safe <private>password=hunter2</private>', 'refuse', 'the note').text, 'safe ');
  });

  it('off: stored as given, <private> still removed', () => {
    assert.deepEqual(redactForWrite(text, 'off', 'the note'), { text: 'deploy with DB_PASSWORD=hunter2 ', redacted: [], private_removed: 1 });
  });

  it('honourPrivate false: <private> tags left as text (bank files)', () => {
    assert.equal(redactForWrite('use <private> tags', 'mask', 'x', { honourPrivate: false }).text, 'use <private> tags');
  });
});

describe('redact: one pass over a whole input (stored-text.ts)', () => {
  const gh = j('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');

  it('masks every string, nested in objects and lists, but the names of REFERENCE_FIELDS; says what it kept out', () => {
    const input = {
      space_id: 'proj',
      filename: `${gh}.md`,
      content: `key ${gh}`,
      tags: ['ok', `password=hunter2`],
      edits: [{ op: 'add', section: gh, title: `T ${gh}`, content: '<private>pin</private>kept' }],
      limit: 5,
    };
    const result = redactFields(input, 'mask');
    assert.deepEqual(result.value, {
      space_id: 'proj',
      filename: `${gh}.md`,
      content: 'key [redacted: github-token]',
      tags: ['ok', 'password=[redacted: password]'],
      edits: [{ op: 'add', section: gh, title: 'T [redacted: github-token]', content: 'kept' }],
      limit: 5,
    });
    assert.deepEqual(result.redacted, [
      { kind: 'github-token', count: 2 },
      { kind: 'password', count: 1 },
    ]);
    assert.equal(result.private_removed, 1);
    const clean = { space_id: 'proj', content: 'nothing secret', tags: ['a'] };
    assert.equal(redactFields(clean, 'mask').value, clean, 'an input without secrets is the same object');
  });

  it('refuse names the field; a field left empty by <private> is refused; off keeps secrets but drops <private>', () => {
    assert.throws(
      () => redactFields({ description: `shop ${gh}` }, 'refuse'),
      (error: unknown) => isLiveMemError(error, 'invalid_input') && /^the description holds what looks like secrets \(github-token ×1\)/.test(error.message),
    );
    assert.throws(() => redactFields({ reason: '<private>why</private>' }, 'mask'), /nothing is left of the reason once its <private> text is removed/);
    assert.deepEqual(redactFields({ content: `${gh} <private>x</private>` }, 'off').value, { content: `${gh} ` });
  });
});

describe('redact: what a plan adds', () => {
  it('counts only secrets the text did not hold before', () => {
    assert.deepEqual(newSecretKinds('# A\npassword=hunter2\n', '# A\n\npassword=hunter2\n\n# B\nmore\n'), []);
    assert.deepEqual(newSecretKinds('# A\n', `# A\nkey ${AWS_ID}\n`), [{ kind: 'aws-access-key-id', count: 1 }]);
    assert.deepEqual(secretKinds('nothing here'), []);
  });

  it('refuseNewSecrets names the place and the kind, never the secret', () => {
    assert.throws(
      () => refuseNewSecrets([{ where: 'techContext.md', before: '', after: `key ${AWS_ID}` }], 'the plan'),
      (error: unknown) =>
        isLiveMemError(error, 'invalid_input') && /techContext\.md \(aws-access-key-id ×1\)/.test(error.message) && !error.message.includes(AWS_ID),
    );
  });
});

describe('redact: the catalogue of provider formats (issue 39)', () => {
  it('holds well over 100 providers, every row with lowercase hints and a sample', () => {
    const providers = new Set(SECRET_PATTERNS.flatMap((pattern) => (pattern.provider ? [pattern.provider] : [])));
    assert.ok(providers.size >= 120, `${providers.size} providers`);
    for (const pattern of SECRET_PATTERNS) {
      assert.ok(pattern.hints.length > 0, pattern.kind);
      for (const hint of pattern.hints) assert.equal(hint, hint.toLowerCase(), pattern.kind);
      assert.ok(pattern.regex.flags.includes('d') && pattern.regex.flags.includes('g'), pattern.kind);
    }
    assert.ok(CATALOGUE.length >= 100 && CATALOGUE.filter((sample) => sample.redTeam).length === 37);
  });

  for (const { kind, text, secret, field, redTeam } of CATALOGUE) {
    it(`${redTeam ? 'red team: ' : ''}${kind} masked in content, tag and agent, and refused in a plan: ${text.slice(0, 40).replace(/\n/g, ' ')}…`, () => {
      const masked = maskSecrets(text);
      assert.ok(!masked.text.includes(secret), masked.text);
      assert.deepEqual(masked.redacted, [{ kind, count: 1 }]);

      // The field walk every write goes through (stored-text.ts): the note's content, a tag, the agent name.
      const input = { space_id: 'proj', category: 'progress', content: text, tags: ['deploy', field], agent: field };
      const walked = redactFields(input, 'mask');
      assert.ok(!JSON.stringify(walked.value).includes(secret), JSON.stringify(walked.value));
      assert.deepEqual(walked.redacted, [{ kind, count: 3 }]);

      // The plan gate (model-output.ts) uses the same table: a bank file copying the secret is refused, naming the kind.
      const plan = { where: 'techContext.md', before: '# Tech\n', after: `# Tech\n\n## Deploy\n\n${text}\n` };
      assert.throws(
        () => guardModelOutput({ subject: 'the plan', nonce: 'n0nce', texts: [plan], sources: [], redact: 'mask' }),
        (error: unknown) => isLiveMemError(error, 'invalid_input') && error.message.includes(`techContext.md (${kind} ×1)`) && !error.message.includes(secret),
      );
    });
  }
});

/** Every file of the repository's own text: docs, README, source and fixtures (the redaction's own source spells out what it catches). */
function corpus(): Array<{ file: string; text: string }> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const walk = (dir: string, ext: RegExp): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) return walk(rel, ext);
      return ext.test(entry.name) ? [rel] : [];
    });
  const files = [
    ...walk('docs', /\.md$/),
    'README.md',
    ...walk('src', /\.ts$/),
    ...walk('fixtures', /\.(?:md|json|jsonl|ts|txt)$/),
    ...walk(path.join('test', 'fixtures'), /\.(?:md|json|jsonl|txt)$/),
  ];
  return files
    .filter((file) => !file.startsWith(path.join('src', 'core', 'redact')))
    .map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));
}

describe("redact: the repository's own prose, code and fixtures are left alone", () => {
  it('masks nothing in docs, README, src and fixtures but the example credentials the docs and comments show on purpose', () => {
    const files = corpus();
    assert.ok(files.length > 200, `${files.length} files`);
    const masks: string[] = [];
    for (const { file, text } of files) {
      for (const { kind, count } of maskSecrets(text).redacted) masks.push(`${file}: ${kind} ×${count}`);
    }
    // configuration.md's `LIVE_MEM_LLM_API_KEY=token-abc`; control.md's `mysql -pSECRET` and `curl -u user:SECRET`;
    // the remotes whose credentials a project's identity drops (spaces.md, git-remote.ts: `https://user:…@host`).
    assert.deepEqual(masks.sort(), [
      `${path.join('docs', 'configuration.md')}: api-key ×1`,
      `${path.join('docs', 'control.md')}: password ×2`,
      `${path.join('docs', 'spaces.md')}: url-password ×1`,
      `${path.join('src', 'config', 'git-remote.ts')}: url-password ×1`,
    ]);
  });
});
