/**
 * A space deleted by one process while another writes into it (each process caches that the space
 * exists, to skip reading `_meta.json` before every note): once the delete has answered, every
 * note is refused with not_found, nothing is left under the space, and the space stays deleted —
 * on fs (where a delete takes the whole folder away in one step) and on S3 (where a note checks
 * the meta once it has landed, and the delete sweeps once more after removing the meta).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listKeys } from '../../src/storage/list.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/mcp-client.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';

const IN_FLIGHT = 8;
const WRITERS = 2;

interface Outcome {
  startedAt: number;
  status: string;
}

/** Writes notes, IN_FLIGHT at a time, until `stop()`; returns every call's start time and status. */
function writeUntilStopped(server: SpawnedServer, spaceId: string) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  let written = 0;
  const lane = async () => {
    while (!stopped) {
      const startedAt = performance.now();
      const result = await server.call('live_note', { space_id: spaceId, category: 'progress', content: `note ${written++}` });
      outcomes.push({ startedAt, status: result.status });
    }
  };
  const lanes = Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return {
    outcomes,
    count: () => outcomes.length,
    stop: async () => {
      stopped = true;
      await lanes;
      return outcomes;
    },
  };
}

const waitFor = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

async function deleteWhileWriting(env: Record<string, string>, storage: StorageDriver): Promise<void> {
  const deleter = await spawnServer({ ...env, LIVE_MEM_AGENT: 'deleter' });
  // Auto-create off: with it, a note after the delete would make the space anew, by design (first-note.test.ts).
  const writers = await Promise.all(
    Array.from({ length: WRITERS }, (_, w) => spawnServer({ ...env, LIVE_MEM_AGENT: `writer-${w}`, LIVE_MEM_AUTO_CREATE_SPACES: 'off' })),
  );
  try {
    assert.equal((await deleter.call('space_create', { space_id: 'doomed' })).status, 'created');
    const runs = writers.map((writer) => writeUntilStopped(writer, 'doomed'));
    await waitFor(() => runs.every((run) => run.count() >= 50));

    const deleted = await deleter.call('space_delete', { space_id: 'doomed', confirm: true });
    const deletedAt = performance.now();
    assert.equal(deleted.status, 'deleted');
    // Let each writer go on well past the delete.
    const counts = runs.map((run) => run.count());
    await waitFor(() => runs.every((run, w) => run.count() >= (counts[w] as number) + 40));
    const outcomes = (await Promise.all(runs.map((run) => run.stop()))).flat();

    const after = outcomes.filter((outcome) => outcome.startedAt > deletedAt);
    assert.ok(after.length >= WRITERS * 40);
    assert.deepEqual([...new Set(after.map((outcome) => outcome.status))], ['not_found'], 'every note asked after the delete is refused');
    assert.ok(
      outcomes.every((outcome) => outcome.status === 'created' || outcome.status === 'not_found'),
      JSON.stringify([...new Set(outcomes.map((o) => o.status))]),
    );
    assert.deepEqual(await listKeys(storage, 'doomed/'), [], 'nothing is left under the deleted space');
    const listed = await deleter.call('space_list');
    assert.deepEqual(listed.spaces, []);
    assert.equal((await writers[0]!.call('space_info', { space_id: 'doomed' })).status, 'not_found');

    // Created again elsewhere: the writers' notes land in the new space.
    assert.equal((await deleter.call('space_create', { space_id: 'doomed' })).status, 'created');
    for (const writer of writers)
      assert.equal((await writer.call('live_note', { space_id: 'doomed', category: 'todo', content: 'in the new space' })).status, 'created');
    const read = await deleter.call('live_read', { space_id: 'doomed' });
    assert.equal(read.total, WRITERS);
  } finally {
    await Promise.all([deleter, ...writers].map((server) => server.close()));
  }
}

describe('a space deleted by one process while others write into it', () => {
  it('on fs: refused from the delete on, nothing left, not resurrected', async () => {
    const home = await tempDir();
    try {
      await deleteWhileWriting({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' }, createFsDriver(home.dir));
    } finally {
      await home.remove();
    }
  });

  const s3 = requireS3OrSkip('space delete race on S3');
  if (s3) {
    it('on S3 (radosgw): refused from the delete on, nothing left, not resurrected', async () => {
      const harness = await makeS3Harness();
      try {
        await deleteWhileWriting({ ...s3ProcessEnv(s3, harness.prefix), LIVE_MEM_LOG_LEVEL: 'warn' }, harness.driver);
      } finally {
        await harness.cleanup();
      }
    });
  }
});
