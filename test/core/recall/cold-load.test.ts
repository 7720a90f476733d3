/**
 * What a new process does with a space's snapshot (issue 22, at a million notes): the index loads
 * without gathering every history filename, yet a live file whose note a consolidation already
 * moved into history is still indexed once; and a build from scratch answers as the snapshot does.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import { decodeSnapshot, encodeSnapshot, type SnapshotHeader } from '../../../src/core/recall/index-store.js';
import { bm25Engine } from '../../../src/search/bm25.js';
import { CorruptIndexError } from '../../../src/search/types.js';
import { readSections } from '../../../src/shared/sections.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { recordingDriver } from '../../helpers/recording-driver.js';

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

const notesRead = (gets: string[], spaceId = 'proj') => gets.filter((key) => key.startsWith(`${spaceId}/live/`)).length;

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
  // The note itself: the notes written after it may come as its answer turns (ranking.ts ANSWER_REACH).
  return (await core.recall.search(owner, { space_id: 'proj', query: 'albatross queue', limit: 10 })).results
    .filter((hit) => /albatross/.test(hit.text))
    .map((hit) => [hit.source, hit.level]);
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

  it('starts every section 8-byte aligned whatever the header and vectors, and round-trips, extra sections included', () => {
    for (const spaceId of ['p', 'proj', 'a-longer-space-name']) {
      for (const vectorBytes of [0, 3, 5, 8, 13]) {
        const vectors = vectorBytes ? { model: 'm', buffer: Buffer.alloc(vectorBytes, 7) } : undefined;
        const extra = { name: 'sittings', version: 1, bytes: 3, write: (into: Buffer) => void into.write('abc') };
        const frame = encodeSnapshot(header(spaceId), index, vectors, [extra]);
        const { sections } = readSections(frame, frame.subarray(0, 8));
        for (const section of sections.values()) assert.equal(section.bytes.byteOffset % 8, 0, `${spaceId}, ${vectorBytes} vector bytes: ${section.name}`);
        assert.ok(sections.get('engine')?.bytes.equals(index.serialize()));
        const decoded = decodeSnapshot(frame, bm25Engine);
        assert.equal(decoded.header.space_id, spaceId);
        assert.deepEqual(decoded.vectors ? [...decoded.vectors] : null, vectors ? [...vectors.buffer] : null);
        assert.equal(decoded.extra.get('sittings')?.toString(), 'abc');
        assert.deepEqual(decoded.rebuilt, []);
        assert.deepEqual(decoded.index.search('kestrel7 heron', { limit: 5 }), index.search('kestrel7 heron', { limit: 5 }));
      }
    }
  });

  it('rejects a damaged header or engine, and a truncated frame; a damaged extra section is left out alone', () => {
    const extra = { name: 'sittings', version: 1, bytes: 64, write: (into: Buffer) => void into.fill(5) };
    const frame = encodeSnapshot(header('proj'), index, undefined, [extra]);
    const { sections } = readSections(frame, frame.subarray(0, 8));
    const engine = sections.get('engine')?.bytes as Buffer;
    const inner = readSections(engine, engine.subarray(0, 8)).sections;
    const flipped = (bytes: Buffer) => {
      const copy = Buffer.from(frame);
      copy[bytes.byteOffset + (bytes.length >> 1)] = (copy[bytes.byteOffset + (bytes.length >> 1)] as number) ^ 0x20;
      return copy;
    };
    const damaged = [flipped(sections.get('header')?.bytes as Buffer), flipped(engine.subarray(0, 64)), frame.subarray(0, frame.length - 1)];
    for (const name of ['ids', 'terms']) damaged.push(flipped(inner.get(name)?.bytes as Buffer));
    for (const frameDamaged of damaged) assert.throws(() => decodeSnapshot(frameDamaged, bm25Engine));
    // The postings are checked as a search first reads them (by blocks), or all at once by verify.
    const postings = decodeSnapshot(flipped(inner.get('postings')?.bytes as Buffer), bm25Engine);
    assert.throws(() => postings.index.verify(), CorruptIndexError);
    const decoded = decodeSnapshot(flipped(sections.get('sittings')?.bytes as Buffer), bm25Engine);
    assert.deepEqual(decoded.rebuilt, ['sittings']);
    assert.equal(decoded.extra.has('sittings'), false);
  });
});

describe('a snapshot damaged in part, or of the previous format', () => {
  const query = (core: Core, text: string) => core.recall.search(owner, { space_id: 'proj', query: text, limit: 5 });
  const queries = ['kestrel3 heron', 'heron4', 'pipeline moved', 'kestrel12'];
  const answers = async (core: Core) => Promise.all(queries.map(async (text) => (await query(core, text)).results.map((hit) => [hit.ref, hit.score])));

  /** A space of 60 live notes and its snapshot (format 2), written by one process. */
  async function spaceWithSnapshot(): Promise<{ storage: StorageDriver; key: string; built: unknown }> {
    const storage = createMemoryDriver();
    const core = await coreOn(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 60; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}: the kestrel${i} pipeline moved to heron${i % 7}` });
    const built = await answers(core);
    await core.idle();
    const all = await snapshots(storage);
    await storage.deleteMany(all.slice(0, -1)); // the first build's and the exit's: the newest alone
    return { storage, key: all.at(-1) as string, built };
  }

  /** Flips a byte in the middle of one of the engine's sections of the stored snapshot. */
  async function damage(storage: StorageDriver, key: string, section: string): Promise<void> {
    const stored = (await storage.get(key))?.body as Buffer;
    const body = Buffer.alloc(stored.length); // unpooled: its sections are read in place, where they are flipped
    stored.copy(body);
    const engine = readSections(body, body.subarray(0, 8)).sections.get('engine')?.bytes as Buffer;
    const target = readSections(engine, engine.subarray(0, 8)).sections.get(section)?.bytes as Buffer;
    body[target.byteOffset - body.byteOffset + (target.length >> 1)] = (body[target.byteOffset - body.byteOffset + (target.length >> 1)] as number) ^ 0x40;
    await storage.put(key, body);
  }

  it('computes a damaged table again alone: no note replayed, the same answers, and a sound snapshot written', async () => {
    const { storage, key, built } = await spaceWithSnapshot();
    await damage(storage, key, 'id-table');
    const recording = recordingDriver(storage);
    const core = await coreOn(recording);
    assert.deepEqual(await answers(core), built);
    assert.deepEqual((await core.recall.indexOf('proj')).index.rebuilt, ['id-table']);
    await core.idle();
    const now = await snapshots(storage);
    assert.equal(now.includes(key), true, 'the damaged snapshot is still used, not deleted');
    const fresh = now.filter((k) => k !== key);
    assert.equal(fresh.length, 1, 'a sound one written beside it');
    assert.deepEqual(decodeSnapshot((await storage.get(fresh[0] as string))?.body as Buffer, bm25Engine).rebuilt, []);
    // What a process reads on the sound snapshot: the same notes (hits' texts), none replayed.
    const sound = recordingDriver(storage);
    assert.deepEqual(await answers(await coreOn(sound)), built);
    assert.equal(notesRead(recording.gets), notesRead(sound.gets));
    assert.ok(notesRead(recording.gets) < 60);
  });

  it('rebuilds the index from the store when its postings are damaged, and deletes that snapshot', async () => {
    const { storage, key, built } = await spaceWithSnapshot();
    await damage(storage, key, 'postings');
    const recording = recordingDriver(storage);
    const core = await coreOn(recording);
    assert.deepEqual(await answers(core), built);
    assert.ok(notesRead(recording.gets) >= 60, 'every note read again');
    assert.equal((await snapshots(storage)).includes(key), false);
  });

  it("places a damaged timeline again from the consolidations' records alone: the same ranking, no note replayed, a sound snapshot written", async () => {
    const storage = createMemoryDriver();
    const core = await coreOn(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++)
        await core.notes.write(owner, {
          space_id: 'proj',
          category: 'progress',
          content: `Step ${round}.${i}: the kestrel${i} pipeline moved to heron${i % 7}`,
        });
      assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    }
    for (let i = 0; i < 10; i++) await core.notes.write(owner, { space_id: 'proj', category: 'todo', content: `Check kestrel${i} against heron${i % 5}` });
    // Scores included: the neighbours and sittings the timeline places lend to them.
    const built = await answers(core);
    await core.idle();
    const all = await snapshots(storage);
    await storage.deleteMany(all.slice(0, -1));
    const key = all.at(-1) as string;
    const stored = (await storage.get(key))?.body as Buffer;
    const timeline = readSections(stored, stored.subarray(0, 8)).sections.get('timeline')?.bytes as Buffer;
    assert.ok(timeline.length > 60 * 8, 'the snapshot carries the timeline');
    const body = Buffer.from(stored);
    const at = timeline.byteOffset - stored.byteOffset + (timeline.length >> 1);
    body[at] = (body[at] as number) ^ 0x40;
    await storage.put(key, body);

    const records = (gets: string[]) => gets.filter((k) => k.endsWith('/record.json'));
    const fetched = (gets: string[]) => gets.filter((k) => !k.includes('/_index/') && !k.endsWith('/record.json')).sort();
    const recording = recordingDriver(storage);
    const reader = await coreOn(recording);
    assert.deepEqual(await answers(reader), built);
    const cids = (await listKeys(storage, 'proj/history/')).filter((k) => k.endsWith('/record.json'));
    assert.equal(cids.length, 3);
    assert.deepEqual(records(recording.gets).sort(), cids, 'each consolidation placed again from its record, once');
    await reader.idle();
    const now = await snapshots(storage);
    const fresh = now.filter((k) => k !== key);
    assert.equal(fresh.length, 1, 'a sound snapshot written beside it');
    const decoded = decodeSnapshot((await storage.get(fresh[0] as string))?.body as Buffer, bm25Engine);
    assert.deepEqual(decoded.rebuilt, []);
    assert.ok(decoded.extra.has('timeline'));
    // On the sound snapshot: the same answers, the same notes read for the hits' texts, no record read.
    await storage.deleteMany([key]);
    const sound = recordingDriver(storage);
    assert.deepEqual(await answers(await coreOn(sound)), built);
    assert.deepEqual(records(sound.gets), []);
    assert.deepEqual(fetched(recording.gets), fetched(sound.gets));
  });

  it('reads a snapshot the previous build wrote (format 1) without replaying a note, then writes it in the current format', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'live-mem-format-1-'));
    try {
      await cp(fileURLToPath(new URL('../../../fixtures/index-format-1/', import.meta.url)), home, { recursive: true });
      const storage = createFsDriver(home);
      const [key] = (await listKeys(storage, 'old/_index/')).filter((k) => k.endsWith('.snapshot'));
      const old = await storage.get(key as string);
      assert.equal(old?.body.subarray(0, 8).toString('latin1'), 'LMRI\x01\x00\x00\x00', 'the fixture is of format 1');
      const recording = recordingDriver(storage);
      const core = createCore({ storage: recording });
      const ask = async (on: Core) => (await on.recall.search(owner, { space_id: 'old', query: 'cache k00001', limit: 5 })).results.map((hit) => hit.ref);
      const fromOld = await ask(core);
      // As the previous build answered when it wrote the fixture.
      assert.deepEqual(fromOld, [
        '20260929T230222_cline_decision_m2000001.md',
        '20261014T050222_claude_issue_m200000k.md',
        '20261023T230222_codex_progress_m200000x.md',
        '20261024T170222_gemini_issue_m200000y.md',
        '20261014T230222_cline_observation_m200000l.md',
      ]);
      assert.deepEqual((await core.recall.indexOf('old')).index.rebuilt, ['format-1']);
      await core.idle();
      const written = (await listKeys(storage, 'old/_index/')).filter((k) => k.endsWith('.snapshot') && k !== key);
      assert.equal(written.length, 1, 'written again in the current format');
      const decoded = decodeSnapshot((await storage.get(written[0] as string))?.body as Buffer, bm25Engine);
      assert.deepEqual(decoded.rebuilt, []);
      // The notes a process reads on the snapshot it wrote: the same (hits' texts, neighbours), none replayed.
      const sound = recordingDriver(storage);
      assert.deepEqual(await ask(createCore({ storage: sound })), fromOld);
      const notes = (gets: string[]) => gets.filter((k) => !k.includes('/_index/') && !k.endsWith('/record.json')).sort();
      assert.deepEqual(notes(recording.gets), notes(sound.gets));
      // Format 1 had no timeline: it was placed from the consolidations' records, once, and kept in the new snapshot.
      const records = (gets: string[]) => gets.filter((k) => k.endsWith('/record.json')).sort();
      assert.deepEqual(records(recording.gets), ['old/history/20261020T230322-000000/record.json', 'old/history/20261112T110322-000001/record.json']);
      assert.deepEqual(records(sound.gets), []);
      assert.ok(notesRead(recording.gets, 'old') <= 5, 'no live note replayed');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
