import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadSettings } from '../../src/config/load.js';
import { resolveSettings } from '../../src/config/settings.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { tempDir } from '../helpers/tmp.js';

describe('settings', () => {
  it('defaults to the fs store in ~/.live-mem, agent = OS user', () => {
    const settings = resolveSettings({ env: {} });
    assert.equal(settings.storage, 'fs');
    assert.match(settings.home, /\.live-mem$/);
    assert.ok(settings.agent.length > 0);
    assert.equal(settings.maxNoteChars, 100_000);
  });

  it('applies defaults < file < environment < flags', () => {
    const file = { storage: 's3', agent: 'from-file', max_note_chars: 10, s3: { bucket: 'file-bucket', region: 'eu-west-3', force_path_style: false } };
    const settings = resolveSettings({
      file,
      env: { LIVE_MEM_AGENT: 'from-env', LIVE_MEM_S3_BUCKET: 'env-bucket' },
      flags: { agent: 'from-flag' },
    });
    assert.equal(settings.agent, 'from-flag');
    assert.equal(settings.s3.bucket, 'env-bucket');
    assert.equal(settings.s3.region, 'eu-west-3');
    assert.equal(settings.s3.forcePathStyle, false);
    assert.equal(settings.maxNoteChars, 10);
  });

  it("accepts the Python server's S3 variable names, the new names winning", () => {
    const settings = resolveSettings({
      env: {
        LIVE_MEM_STORAGE: 's3',
        S3_ENDPOINT_URL: 'http://old',
        S3_BUCKET_NAME: 'b',
        S3_ACCESS_KEY_ID: 'ak',
        S3_SECRET_ACCESS_KEY: 'sk',
        S3_REGION_NAME: 'r',
        LIVE_MEM_S3_ENDPOINT: 'http://new',
      },
    });
    assert.deepEqual(settings.s3, { endpoint: 'http://new', bucket: 'b', region: 'r', accessKeyId: 'ak', secretAccessKey: 'sk' });
  });

  it('refuses bad values with a message naming the setting', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ LIVE_MEM_STORAGE: 'ftp' }, /LIVE_MEM_STORAGE must be one of/],
      [{ LIVE_MEM_MAX_NOTE_CHARS: 'lots' }, /LIVE_MEM_MAX_NOTE_CHARS must be an integer/],
      [{ LIVE_MEM_STORAGE: 's3' }, /needs a bucket/],
      [{ LIVE_MEM_S3_FORCE_PATH_STYLE: 'maybe' }, /true or false/],
      [{ LIVE_MEM_ADMIN_TOKEN: 'short-secret' }, /too weak \(12 characters\)/],
      [{ LIVE_MEM_AUTH: 'sometimes' }, /LIVE_MEM_AUTH must be one of optional, required/],
      [{ LIVE_MEM_LLM_BASE_URL: 'http://x/v1' }, /LIVE_MEM_LLM_MODEL is not/],
    ];
    for (const [env, message] of bad) {
      assert.throws(
        () => resolveSettings({ env }),
        (e) => isLiveMemError(e, 'config_error') && message.test(e.message),
      );
    }
  });

  it('reads the tools offered: a profile or names, from a string or a YAML list, checked for form only', () => {
    assert.equal(resolveSettings({ env: {} }).tools, undefined, 'unset: each transport has its default (serve.ts)');
    assert.equal(resolveSettings({ env: { LIVE_MEM_TOOLS: 'agent' } }).tools, 'agent');
    assert.equal(resolveSettings({ env: {}, file: { tools: ['agent', 'history_list'] } }).tools, 'agent,history_list');
    assert.equal(resolveSettings({ env: { LIVE_MEM_TOOLS: 'agent' }, flags: { tools: ' live_note , live_read,' } }).tools, 'live_note,live_read');
    for (const tools of ['Live Note', ',', 'agent;standard']) {
      assert.throws(
        () => resolveSettings({ env: {}, flags: { tools } }),
        (e) => isLiveMemError(e, 'config_error') && /--tools must be a profile \(agent, standard, all, admin\) or tool names/.test(e.message),
      );
    }
  });

  it('reads the embeddings endpoint from the file and the environment, and wants a model with a base URL', () => {
    assert.deepEqual(resolveSettings({ env: {} }).embeddings, { weight: 0.2, localDtype: 'q8' });
    const settings = resolveSettings({
      file: { embeddings: { base_url: 'http://127.0.0.1:11434/v1/', model: 'from-file' } },
      env: { LIVE_MEM_EMBEDDINGS_MODEL: 'nomic-embed-text', LIVE_MEM_EMBEDDINGS_API_KEY: 'secret' },
    });
    assert.deepEqual(settings.embeddings, {
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'nomic-embed-text',
      apiKey: 'secret',
      weight: 0.2,
      localDtype: 'q8',
    });
    assert.throws(
      () => resolveSettings({ env: { LIVE_MEM_EMBEDDINGS_BASE_URL: 'http://x/v1' } }),
      (e) => isLiveMemError(e, 'config_error') && /LIVE_MEM_EMBEDDINGS_BASE_URL is set but LIVE_MEM_EMBEDDINGS_MODEL is not/.test(e.message),
    );
    assert.throws(
      () => resolveSettings({ env: { LIVE_MEM_EMBEDDINGS_BASE_URL: 'localhost:11434', LIVE_MEM_EMBEDDINGS_MODEL: 'm' } }),
      (e) => isLiveMemError(e, 'config_error') && /LIVE_MEM_EMBEDDINGS_BASE_URL must be an http\(s\) URL/.test(e.message),
    );
  });

  it('reads a file value that is a reference to an environment variable from it; unset, the setting is unset; only a whole value is one', () => {
    const file = { llm: { base_url: 'http://127.0.0.1:11434/v1', model: 'm', api_key: `\${TEAM_KEY}` }, agent: `pre\${X}`, s3: { bucket: `\${BUCKET}` } };
    const set = resolveSettings({ file, env: { TEAM_KEY: 'sk-team', BUCKET: 'team-memory' } });
    assert.equal(set.llm.apiKey, 'sk-team');
    assert.equal(set.s3.bucket, 'team-memory');
    assert.equal(set.agent, `pre\${X}`, 'a value that merely contains a reference is taken as it is');
    // A client started without the variable (a desktop app) still loads its settings: the key is just absent.
    const unset = resolveSettings({ file, env: { TEAM_KEY: '' } });
    assert.equal(unset.llm.apiKey, undefined);
    assert.equal(unset.llm.model, 'm');
    // The variable's value is checked as the setting's own would be.
    assert.throws(
      () => resolveSettings({ file: { max_note_chars: `\${N}` }, env: { N: 'many' } }),
      (e) => isLiveMemError(e, 'config_error') && /max_note_chars/.test(e.message),
    );
  });

  it('reads the hybrid weight and a local model, and refuses a local model beside an endpoint', () => {
    const settings = resolveSettings({
      env: { LIVE_MEM_EMBEDDINGS_WEIGHT: '0.35', LIVE_MEM_EMBEDDINGS_LOCAL: 'Xenova/all-MiniLM-L6-v2', LIVE_MEM_EMBEDDINGS_LOCAL_DIR: '/models' },
    });
    assert.deepEqual(settings.embeddings, { weight: 0.35, local: 'Xenova/all-MiniLM-L6-v2', localDir: '/models', localDtype: 'q8' });
    assert.equal(resolveSettings({ env: { LIVE_MEM_EMBEDDINGS_LOCAL_DTYPE: 'fp32' } }).embeddings.localDtype, 'fp32');
    for (const [name, value] of [
      ['LIVE_MEM_EMBEDDINGS_WEIGHT', '1.5'],
      ['LIVE_MEM_EMBEDDINGS_LOCAL', '../../etc'],
      ['LIVE_MEM_EMBEDDINGS_LOCAL', '/abs/model'],
      ['LIVE_MEM_EMBEDDINGS_LOCAL_DTYPE', 'int3'],
    ] as const)
      assert.throws(
        () => resolveSettings({ env: { [name]: value } }),
        (e) => isLiveMemError(e, 'config_error') && e.message.includes(name),
      );
    assert.throws(
      () =>
        resolveSettings({
          env: { LIVE_MEM_EMBEDDINGS_BASE_URL: 'http://x/v1', LIVE_MEM_EMBEDDINGS_MODEL: 'm', LIVE_MEM_EMBEDDINGS_LOCAL: 'Xenova/bge-small-en-v1.5' },
        }),
      (e) => isLiveMemError(e, 'config_error') && /both set/.test(e.message),
    );
  });

  it('reads live-mem.yaml from the home folder, or the file given', async () => {
    const tmp = await tempDir();
    try {
      await writeFile(path.join(tmp.dir, 'live-mem.yaml'), 'agent: yaml-agent\nmax_note_chars: 500\n');
      const settings = loadSettings({ env: { LIVE_MEM_HOME: tmp.dir } });
      assert.equal(settings.agent, 'yaml-agent');
      assert.equal(settings.maxNoteChars, 500);
      assert.throws(() => loadSettings({ env: {}, configFile: path.join(tmp.dir, 'missing.yaml') }), /config file not found/);
      await writeFile(path.join(tmp.dir, 'bad.yaml'), '- a list\n');
      assert.throws(() => loadSettings({ env: {}, configFile: path.join(tmp.dir, 'bad.yaml') }), /must be a YAML mapping/);
    } finally {
      await tmp.remove();
    }
  });
});
