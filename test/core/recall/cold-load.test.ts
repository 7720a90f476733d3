/**
 * What a new process does with a space's snapshot (issue 22, at a million notes): the index loads
 * without gathering every history filename, yet a live file whose note a consolidation already
 * moved into history is still indexed once; and a build from scratch answers as the snapshot does.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import { decodeSnapshot, encodeSnapshot, type SnapshotHeader } from '../../../src/core/recall/index-store.js';
import { bm25Engine } from '../../../src/search/bm25.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function coreOn(storage: StorageDriver): Promise<Core> {
  const llm = await startScriptedLlm([{ dynamic: () => plan([rewrite('notes.md', '# Notes\n- kept\n')], 'Synthesis.') }]);
  servers.push(llm);
  let n = 0;
  return createCore({
    storage,
    clock: steppingClock('2026-03-01T09:00:00.000Z', 1000),
    randomId: () => (n++).toString(36).padStart(6, '0'),
    llm: llm.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
  });
}

const snapshots = async (storage: StorageDriver) => (await listKeys(storage, 'proj/_index/')).filter((key) => key.endsWith('.snapshot'));

/**
 * A space whose snapshot holds the albatross note as live; then `consolidations` consolidations, the
 * first of which moves it into history; then its live file put back, as a consolidation killed
 * between writing history and deleting live files leaves it.
 */
async function consolidatedButStillLive(consolidations: number): Promise<StorageDriver> {
  const storage = createMemoryDriver();
  const core = await coreOn(storage);
  await core.spaces.create(owner, { space_id: 'proj' });
  await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'The albatross queue drains nightly' });
  await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: 'The petrel cache is warm' });
  await core.recall.search(owner, { space_id: 'proj', query: 'albatross' });
  await (await core.recall.indexOf('proj')).saveSnapshot();
  assert.equal((await snapshots(storage)).length, 1);
  const [key] = (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md'));
  const albatross = (await storage.get(key as string))?.body as Buffer;
  assert.match(albatross.toString(), /albatross/);

  const writer = await coreOn(storage); // another process: the snapshot stays as it was
  for (let i = 0; i < consolidations; i++) {
    if (i > 0) await writer.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i} of the gannet rollout` });
    assert.equal((await writer.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
  }
  assert.deepEqual(
    (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md')),
    [],
  );
  await storage.put(key as string, albatross);
  return storage;
}

async function albatrossHits(storage: StorageDriver) {
  const core = await coreOn(storage);
  return (await core.recall.search(owner, { space_id: 'proj', query: 'albatross queue', limit: 10 })).results.map((hit) => [hit.source, hit.level]);
}

describe('a new process and its snapshot', () => {
  it('indexes a consolidated note whose live file is still there once, as history (one consolidation since the snapshot)', async () => {
    const storage = await consolidatedButStillLive(1);
    assert.deepEqual(await albatrossHits(storage), [['history', 0]]);
  });

  it('does so too with many consolidations since the note was written, and from scratch', async () => {
    const storage = await consolidatedButStillLive(20);
    assert.deepEqual(await albatrossHits(storage), [['history', 0]]);
    await storage.deleteMany(await snapshots(storage));
    assert.deepEqual(await albatrossHits(storage), [['history', 0]], 'built without a snapshot');
  });

  it('answers the same from a build from scratch as from the snapshot it wrote', async () => {
    const storage = createMemoryDriver();
    const core = await coreOn(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 30; i++)
        await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Round ${round}: the kestrel${i} pipeline moved to heron${i % 7}` });
      assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    }
    for (let i = 0; i < 20; i++) await core.notes.write(owner, { space_id: 'proj', category: 'todo', content: `Check kestrel${i} against heron${i % 5}` });
    const queries = ['kestrel3 heron', 'heron4', 'pipeline moved', 'check kestrel1', 'round'];
    const answers = async (on: Core) =>
      Promise.all(queries.map(async (query) => (await on.recall.search(owner, { space_id: 'proj', query, limit: 8 })).results.map((hit) => hit.ref)));
    const built = await answers(core);
    await core.idle();
    assert.equal((await snapshots(storage)).length, 1);
    assert.deepEqual(await answers(await coreOn(storage)), built);
  });
});

describe('the snapshot frame', () => {
  const header = (spaceId: string): Omit<SnapshotHeader, 'vectors'> => ({
    format: 'live-mem-index',
    engine: bm25Engine.name,
    space_id: spaceId,
    created_at: '2026-03-01T09:00:00.000Z',
    history: [],
    preimages: {},
    bank: {},
    synthesis: null,
    summaries: {},
  });
  const index = bm25Engine.create();
  for (let i = 0; i < 50; i++) index.add(`n:note-${i}`, `the kestrel${i} pipeline and a heron${i % 4}`);

  it('starts the engine 8-byte aligned whatever the header and vectors, and round-trips', () => {
    for (const spaceId of ['p', 'proj', 'a-longer-space-name']) {
      for (const vectorBytes of [0, 3, 5, 8, 13]) {
        const vectors = vectorBytes ? { model: 'm', buffer: Buffer.alloc(vectorBytes, 7) } : undefined;
        const frame = encodeSnapshot(header(spaceId), index, vectors);
        const engineStart = 44 + frame.readUInt32LE(8) + vectorBytes;
        assert.equal(engineStart % 8, 0, `${spaceId}, ${vectorBytes} vector bytes`);
        assert.ok(frame.subarray(engineStart).equals(index.serialize()));
        const decoded = decodeSnapshot(frame, bm25Engine);
        assert.equal(decoded.header.space_id, spaceId);
        assert.deepEqual(decoded.vectors ? [...decoded.vectors] : null, vectors ? [...vectors.buffer] : null);
        assert.deepEqual(decoded.index.search('kestrel7 heron', { limit: 5 }), index.search('kestrel7 heron', { limit: 5 }));
      }
    }
  });

  it('still rejects a damaged frame: the header padding is under its checksum', () => {
    const frame = encodeSnapshot(header('proj'), index);
    const json = frame.subarray(44, 44 + frame.readUInt32LE(8)).toString();
    assert.ok(json.endsWith(' ') || (44 + json.length) % 8 === 0);
    const padding = Buffer.from(frame);
    padding[44 + json.length - 1] = 0x0a; // a newline for the last byte: still JSON, not the same bytes
    const engine = Buffer.from(frame);
    engine[frame.length - 100] = (engine[frame.length - 100] as number) ^ 0xff;
    for (const damaged of [padding, engine, frame.subarray(0, frame.length - 1)]) assert.throws(() => decodeSnapshot(damaged, bm25Engine));
  });
});
