/**
 * Secrets never stored, end to end: `live_note` to the MCP server the binary serves (in this process), one
 * note per kind of secret, then every byte the store holds is read back (on disk, and on S3 in radosgw when
 * it is configured); `<private>` never stored; LIVE_MEM_REDACT=refuse and off; the CLI's line.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type TestServer } from '../helpers/mcp-client.js';
import { ensureS3Bucket, requireS3OrSkip, s3DriverOptions, s3ProcessEnv, uniqueS3Prefix } from '../helpers/s3.js';
import { plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { CATALOGUE } from '../helpers/secret-catalogue.js';
import { AWS_ID, expectedKinds, POSITIVES, type Sample } from '../helpers/secret-samples.js';
import { tempDir } from '../helpers/tmp.js';

const PRIVATE = 'the door code is 2468';
const note = (text: string) => `${text}\n<private>${PRIVATE}</private>`;

/** Every file under `dir`, concatenated. */
async function bytesUnder(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  return (await Promise.all(files.map((file) => readFile(file, 'utf8')))).join('\n');
}

async function withServer<T>(env: Record<string, string>, run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await inProcessServer({ LIVE_MEM_LOG_LEVEL: 'warn', ...env });
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Writes one note per sample; checks each answer names its kind and never holds the secret. */
async function noteEveryKind(server: TestServer): Promise<void> {
  assert.equal((await server.call('space_create', { space_id: 'proj' })).status, 'created');
  for (const sample of POSITIVES) {
    const [, text, secret] = sample;
    const result = await server.call('live_note', { space_id: 'proj', category: 'observation', content: note(text) });
    assert.equal(result.status, 'created', JSON.stringify(result));
    assert.deepEqual(result.redacted, expectedKinds(sample), text);
    assert.equal(result.private_removed, 1);
    assert.ok(!JSON.stringify(result).includes(secret));
  }
  const read = await server.call('live_read', { space_id: 'proj', limit: 1000 });
  assert.equal(read.total, POSITIVES.length);
}

function assertNoSecret(stored: string): void {
  for (const [kind, , secret] of POSITIVES) {
    assert.ok(!stored.includes(secret), `${kind}: the secret is in the store`);
    assert.ok(stored.includes(`[redacted: ${kind}]`), `${kind}: no marker in the store`);
  }
  assert.ok(!stored.includes(PRIVATE) && !stored.includes('<private>'), '<private> text is in the store');
}

describe('live_note over MCP: secrets never reach the disk', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    tmp = await tempDir();
  });
  after(async () => tmp?.remove());

  it('mask (default): each kind masked, <private> removed, in every byte of the store', async () => {
    const home = path.join(tmp.dir, 'mask');
    await withServer({ LIVE_MEM_HOME: home }, noteEveryKind);
    assertNoSecret(await bytesUnder(home));
  });

  it('refuse: the note is refused naming the kind, and nothing is stored', async () => {
    const home = path.join(tmp.dir, 'refuse');
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_REDACT: 'refuse' }, async (server) => {
      await server.call('space_create', { space_id: 'proj' });
      const [, text, secret] = POSITIVES.find(([kind]) => kind === 'github-token') as Sample;
      const result = await server.call('live_note', { space_id: 'proj', category: 'observation', content: text });
      assert.equal(result.status, 'error');
      assert.equal(result.code, 'invalid_input');
      assert.match(String(result.message), /github-token ×1/);
      assert.ok(!JSON.stringify(result).includes(secret));
      const plain = await server.call('live_note', { space_id: 'proj', category: 'observation', content: note('no secret here') });
      assert.equal(plain.status, 'created');
    });
    const live = (await readdir(path.join(home, 'proj', 'live'))).filter((name) => name.endsWith('.md'));
    assert.equal(live.length, 1);
    const stored = await bytesUnder(home);
    assert.ok(!stored.includes(PRIVATE));
  });

  it('off: stored as given, <private> still removed', async () => {
    const home = path.join(tmp.dir, 'off');
    const [, text, secret] = POSITIVES.find(([kind]) => kind === 'password') as Sample;
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_REDACT: 'off' }, async (server) => {
      await server.call('space_create', { space_id: 'proj' });
      const result = await server.call('live_note', { space_id: 'proj', category: 'observation', content: note(text) });
      assert.equal(result.redacted, undefined);
      assert.equal(result.private_removed, 1);
    });
    const stored = await bytesUnder(home);
    assert.ok(stored.includes(secret));
    assert.ok(!stored.includes(PRIVATE));
  });

  it('the CLI says what it kept out, never the secret', async () => {
    const home = path.join(tmp.dir, 'cli');
    const env = { LIVE_MEM_HOME: home, PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
    await execa(process.execPath, [BIN, 'space', 'create', 'proj'], { env, extendEnv: false });
    const run = await execa(process.execPath, [BIN, 'note', 'proj', 'DB_PASSWORD=hunter2 <private>x</private>', '-c', 'observation'], {
      env,
      extendEnv: false,
    });
    assert.match(run.stdout, /\(secrets masked: password ×1; 1 <private> span\(s\) not stored\)/);
    assert.ok(!run.stdout.includes('hunter2'));
  });
});

describe('the catalogue of provider formats over MCP (issue 39)', () => {
  it("each sample in a note's content, a tag and the agent name, then all of them in a bank_write: masked, and no byte of the store holds one", async () => {
    const tmp = await tempDir();
    try {
      const home = path.join(tmp.dir, 'home');
      // The admin tool profile offers bank_write (a person's correction).
      await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOOLS: 'admin' }, async (server) => {
        assert.equal((await server.call('space_create', { space_id: 'proj' })).status, 'created');
        for (const { kind, text, secret, field } of CATALOGUE) {
          const result = await server.call('live_note', { space_id: 'proj', category: 'observation', content: text, tags: `deploy, ${field}`, agent: field });
          assert.equal(result.status, 'created', `${kind}: ${JSON.stringify(result)}`);
          assert.deepEqual(result.redacted, [{ kind, count: 3 }], `${kind}: ${text}`);
          assert.ok(!JSON.stringify(result).includes(secret), kind);
        }
        const content = ['# Credentials', ...CATALOGUE.map(({ text }, i) => `## Sample ${i}\n\n${text}`)].join('\n\n');
        const written = await server.call('bank_write', { space_id: 'proj', filename: 'credentials.md', content: `${content}\n` });
        assert.equal(written.status, 'created', JSON.stringify(written));
        const counted = new Map<string, number>();
        for (const { kind } of CATALOGUE) counted.set(kind, (counted.get(kind) ?? 0) + 1);
        assert.deepEqual(new Map((written.redacted as Array<{ kind: string; count: number }>).map(({ kind, count }) => [kind, count])), counted);
      });
      const stored = await bytesUnder(home);
      for (const { kind, secret } of CATALOGUE) {
        assert.ok(!stored.includes(secret), `${kind}: the secret is in the store`);
        assert.ok(stored.includes(`[redacted: ${kind}]`), `${kind}: no marker in the store`);
      }
    } finally {
      await tmp.remove();
    }
  });

  it("bank_consolidate: a plan copying the red team's 37 secrets from a note into the bank is refused, naming each kind", async () => {
    const tmp = await tempDir();
    const redTeam = CATALOGUE.filter((sample) => sample.redTeam);
    const leaked = redTeam.map(({ text }) => text).join('\n\n');
    const llm = await startScriptedLlm([{ reply: plan([rewrite('techContext.md', `# Tech\n\n${leaked}\n`)]) }]);
    try {
      const home = path.join(tmp.dir, 'home');
      await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_REDACT: 'off' }, async (server) => {
        await server.call('space_create', { space_id: 'proj' });
        assert.equal((await server.call('live_note', { space_id: 'proj', category: 'decision', content: leaked })).status, 'created');
      });
      const env = { LIVE_MEM_HOME: home, LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' };
      await withServer(env, async (server) => {
        const result = await server.call('bank_consolidate', { space_id: 'proj' });
        assert.equal(result.status, 'error');
        assert.equal(result.code, 'invalid_input');
        for (const { kind, secret } of redTeam) {
          assert.match(String(result.message), new RegExp(`\\b${kind} ×`), kind);
          assert.ok(!JSON.stringify(result).includes(secret), kind);
        }
      });
      assert.deepEqual(
        (await readdir(path.join(home, 'proj', 'bank'))).filter((name) => name.endsWith('.md')),
        [],
      );
    } finally {
      await llm.close();
      await tmp.remove();
    }
  });
});

describe('live-mem import: an archive carrying a secret', () => {
  it('verified as it is, written masked (the result names the file and kind); with refuse, nothing imported', async () => {
    const tmp = await tempDir();
    try {
      const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
      const cli = (home: string, args: string[], extra: Record<string, string> = {}) =>
        execa(process.execPath, [BIN, ...args], { env: { ...base, LIVE_MEM_HOME: home, ...extra }, extendEnv: false, reject: false });
      const source = path.join(tmp.dir, 'source');
      const archive = path.join(tmp.dir, 'proj.tar.gz');
      await cli(source, ['space', 'create', 'proj']);
      await cli(source, ['note', 'proj', `key ${AWS_ID} <private>${PRIVATE}</private>`], { LIVE_MEM_REDACT: 'off' });
      assert.equal((await cli(source, ['export', 'proj', '-o', archive])).exitCode, 0);

      const target = path.join(tmp.dir, 'target');
      const imported = await cli(target, ['import', archive, '--as', 'copy', '--json']);
      assert.equal(imported.exitCode, 0, imported.stderr);
      const result = JSON.parse(imported.stdout);
      assert.equal(result.redacted_files.length, 1);
      assert.match(result.redacted_files[0].path, /^live\//);
      assert.deepEqual(result.redacted_files[0].redacted, [{ kind: 'aws-access-key-id', count: 1 }]);
      const stored = await bytesUnder(path.join(target, 'copy'));
      assert.ok(!stored.includes(AWS_ID) && stored.includes('[redacted: aws-access-key-id]'));

      const refusing = path.join(tmp.dir, 'refusing');
      const refused = await cli(refusing, ['import', archive, '--as', 'copy'], { LIVE_MEM_REDACT: 'refuse' });
      assert.equal(refused.exitCode, 2, refused.stderr); // invalid input
      assert.match(refused.stderr, /the archive's live\/\S+ holds what looks like secrets \(aws-access-key-id ×1\).*Nothing was imported/);
      assert.ok(!refused.stderr.includes(AWS_ID));
      assert.deepEqual(await readdir(refusing).catch(() => []), []);
    } finally {
      await tmp.remove();
    }
  });
});

describe('bank_consolidate over MCP: a model that copies a secret into the bank', () => {
  it('refused, asked once more, refused again: the run ends error and the bank on disk holds nothing', async () => {
    const tmp = await tempDir();
    // The model copies the key it was shown (a note written with LIVE_MEM_REDACT=off) into the bank, every time.
    const llm = await startScriptedLlm([{ reply: plan([rewrite('techContext.md', `# Tech\n\nDeploy key ${AWS_ID}\n`)]) }]);
    try {
      const home = path.join(tmp.dir, 'home');
      await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_REDACT: 'off' }, async (server) => {
        await server.call('space_create', { space_id: 'proj' });
        await server.call('live_note', { space_id: 'proj', category: 'decision', content: `deploy key ${AWS_ID}` });
      });
      const env = { LIVE_MEM_HOME: home, LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' };
      await withServer(env, async (server) => {
        const result = await server.call('bank_consolidate', { space_id: 'proj' });
        assert.equal(result.status, 'error');
        assert.equal(result.code, 'invalid_input');
        assert.match(String(result.message), /techContext\.md \(aws-access-key-id ×1\)/);
        assert.ok(!JSON.stringify(result).includes(AWS_ID));
      });
      assert.equal(llm.requests.length, 2);
      assert.match(llm.requests[1]?.messages.at(-1)?.content ?? '', /refused[\s\S]*aws-access-key-id/);
      assert.deepEqual(
        (await readdir(path.join(home, 'proj', 'bank'))).filter((name) => name.endsWith('.md')),
        [],
      );
      assert.equal((await readdir(path.join(home, 'proj', 'live'))).filter((name) => name.endsWith('.md')).length, 1);
    } finally {
      await llm.close();
      await tmp.remove();
    }
  });
});

describe('live_note on S3 (radosgw): the object holds no secret', () => {
  const config = requireS3OrSkip('secrets on s3');
  if (config) {
    it('mask: each kind masked, <private> removed, in every object under the prefix', async () => {
      await ensureS3Bucket(config);
      const prefix = uniqueS3Prefix('secrets');
      const driver = createS3Driver({ ...s3DriverOptions(config), prefix });
      try {
        await withServer(s3ProcessEnv(config, prefix), noteEveryKind);
        const keys = await listKeys(driver, '');
        assert.ok(keys.some((key) => key.startsWith('proj/live/')));
        const bodies = await Promise.all(keys.map(async (key) => (await driver.get(key))?.body.toString('utf8') ?? ''));
        assertNoSecret(bodies.join('\n'));
      } finally {
        await driver.deleteMany(await listKeys(driver, ''));
        await driver.close?.();
      }
    });
  }
});
