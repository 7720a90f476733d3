/**
 * Several live-mem processes share one store: 4 servers each write 100 notes into one space at
 * once (10 calls in flight per process), then every one of the 400 notes is present and readable.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { mapLimit } from '../../src/shared/concurrency.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { spawnServer } from '../helpers/mcp-client.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';

const PROCESSES = 4;
const NOTES_EACH = 100;

async function writeFromProcesses(env: Record<string, string>, storage: StorageDriver): Promise<void> {
  const servers = await Promise.all(Array.from({ length: PROCESSES }, (_, p) => spawnServer({ ...env, LIVE_MEM_AGENT: `proc-${p}` })));
  try {
    // Every process races to create the space: exactly one creates it.
    const creates = await Promise.all(servers.map((s) => s.call('space_create', { space_id: 'shared' })));
    assert.deepEqual(creates.map((c) => c.status).sort(), ['already_exists', 'already_exists', 'already_exists', 'created']);
    await Promise.all(
      servers.map((server, p) =>
        mapLimit(
          Array.from({ length: NOTES_EACH }, (_, i) => i),
          10,
          async (i) => {
            const result = await server.call('live_note', { space_id: 'shared', category: 'progress', content: `process ${p} note ${i}` });
            assert.equal(result.status, 'created');
          },
        ),
      ),
    );
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
  const core = createCore({ storage });
  const read = await core.notes.read(ownerCaller('checker'), { space_id: 'shared', limit: 1000 });
  assert.equal(read.total, PROCESSES * NOTES_EACH);
  assert.equal(read.has_more, false);
  const contents = new Set(read.notes.map((n) => n.content));
  for (let p = 0; p < PROCESSES; p++) {
    for (let i = 0; i < NOTES_EACH; i++) assert.ok(contents.has(`process ${p} note ${i}`), `process ${p} note ${i}`);
  }
  assert.deepEqual(
    [...new Set(read.notes.map((n) => n.agent))].sort(),
    Array.from({ length: PROCESSES }, (_, p) => `proc-${p}`),
  );
}

describe('four processes writing into one space at once', () => {
  it('on fs: all 400 notes are present and readable', async () => {
    const home = await tempDir();
    try {
      await writeFromProcesses({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' }, createFsDriver(home.dir));
    } finally {
      await home.remove();
    }
  });

  const s3 = requireS3OrSkip('multi-process on S3');
  if (s3) {
    it('on S3 (radosgw): all 400 notes are present and readable', async () => {
      const harness = await makeS3Harness();
      try {
        await writeFromProcesses({ ...s3ProcessEnv(s3, harness.prefix), LIVE_MEM_LOG_LEVEL: 'warn' }, harness.driver);
      } finally {
        await harness.cleanup();
      }
    });
  }
});
