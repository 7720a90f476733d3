/**
 * Secrets never stored, end to end: `live_note` over MCP stdio with the built binary, one note per
 * kind of secret, then every byte the store holds is read back (on disk, and on S3 in radosgw when
 * it is configured); `<private>` never stored; LIVE_MEM_REDACT=refuse and off; the CLI's line.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { BIN, spawnServer, type SpawnedServer } from '../helpers/mcp-client.js';
import { ensureS3Bucket, requireS3OrSkip, s3DriverOptions, uniqueS3Prefix } from '../helpers/s3.js';
import { POSITIVES } from '../helpers/secret-samples.js';
import { tempDir } from '../helpers/tmp.js';

const PRIVATE = 'the door code is 2468';
const note = (text: string) => `${text}\n<private>${PRIVATE}</private>`;

/** Every file under `dir`, concatenated. */
async function bytesUnder(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  return (await Promise.all(files.map((file) => readFile(file, 'utf8')))).join('\n');
}

async function withServer<T>(env: Record<string, string>, run: (server: SpawnedServer) => Promise<T>): Promise<T> {
  const server = await spawnServer({ LIVE_MEM_LOG_LEVEL: 'warn', ...env });
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Writes one note per sample; checks each answer names its kind and never holds the secret. */
async function noteEveryKind(server: SpawnedServer): Promise<void> {
  assert.equal((await server.call('space_create', { space_id: 'proj' })).status, 'created');
  for (const [kind, text, secret] of POSITIVES) {
    const result = await server.call('live_note', { space_id: 'proj', category: 'observation', content: note(text) });
    assert.equal(result.status, 'created', JSON.stringify(result));
    assert.deepEqual(result.redacted, [{ kind, count: 1 }], text);
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

describe('live_note over MCP stdio: secrets never reach the disk', () => {
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
      const [, text, secret] = POSITIVES.find(([kind]) => kind === 'github-token') as [string, string, string];
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
    const [, text, secret] = POSITIVES.find(([kind]) => kind === 'password') as [string, string, string];
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

describe('live_note on S3 (radosgw): the object holds no secret', () => {
  const config = requireS3OrSkip('secrets on s3');
  if (config) {
    it('mask: each kind masked, <private> removed, in every object under the prefix', async () => {
      await ensureS3Bucket(config);
      const prefix = uniqueS3Prefix('secrets');
      const driver = createS3Driver({ ...s3DriverOptions(config), prefix });
      try {
        await withServer(
          {
            LIVE_MEM_STORAGE: 's3',
            LIVE_MEM_S3_ENDPOINT: config.endpoint,
            LIVE_MEM_S3_BUCKET: config.bucket,
            LIVE_MEM_S3_ACCESS_KEY_ID: config.accessKeyId,
            LIVE_MEM_S3_SECRET_ACCESS_KEY: config.secretAccessKey,
            LIVE_MEM_S3_PREFIX: prefix,
            LIVE_MEM_S3_FORCE_PATH_STYLE: 'true',
          },
          noteEveryKind,
        );
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
