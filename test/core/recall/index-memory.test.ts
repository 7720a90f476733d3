/**
 * The search indexes' memory budget and snapshot cadence (issue 22): indexes past
 * LIVE_MEM_INDEX_MEMORY_MB are evicted least recently used and loaded again from their snapshot
 * (written before eviction when the index held unsaved changes); a process leaves a snapshot when it
 * replayed at least SNAPSHOT_AFTER_CHANGES documents, so the next one replays a bounded tail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import { SNAPSHOT_AFTER_CHANGES } from '../../../src/core/recall/space-index.js';
import { mapLimit } from '../../../src/shared/concurrency.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { keysHolding } from '../../helpers/forget.js';
import { recordingDriver } from '../../helpers/recording-driver.js';

let ids = 0;
const coreOn = (storage: StorageDriver, indexMemoryBytes?: number): Core =>
  createCore({ storage, randomId: () => (ids++).toString(36).padStart(6, '0'), ...(indexMemoryBytes ? { indexMemoryBytes } : {}) });

async function seed(core: Core, spaceId: string, count: number, from = 0): Promise<void> {
  if (from === 0) await core.spaces.create(owner, { space_id: spaceId });
  await mapLimit(
    Array.from({ length: count }, (_, i) => from + i),
    8,
    (i) => core.notes.write(owner, { space_id: spaceId, category: 'progress', content: `Entry ${i} of ${spaceId}: the kestrel${i} pipeline and a heron` }),
  );
}

const snapshotsOf = async (storage: StorageDriver, spaceId: string) =>
  (await listKeys(storage, `${spaceId}/_index/`)).filter((key) => key.endsWith('.snapshot'));
const notesRead = (gets: string[], spaceId: string) => gets.filter((key) => key.startsWith(`${spaceId}/live/`)).length;
const search = (core: Core, spaceId: string, query = 'kestrel3 heron') => core.recall.search(owner, { space_id: spaceId, query, limit: 5 });

describe('index memory budget', () => {
  it('evicts the least recently used index, writing its snapshot first; a search after answers the same from it', async () => {
    const base = createMemoryDriver();
    await seed(coreOn(base), 'alpha', 20); // below the size a first build snapshots at: only eviction writes one
    await seed(coreOn(base), 'beta', 20);
    const storage = recordingDriver(base);
    const core = coreOn(storage, 1); // a budget of one byte: only the index just asked for stays
    const before = await search(core, 'alpha');
    await core.idle();
    assert.deepEqual(await snapshotsOf(base, 'alpha'), [], 'a 20-note index is not snapshotted while it stays in memory');
    assert.deepEqual(
      core.recall.memory().map((entry) => entry.space_id),
      ['alpha'],
    );

    await search(core, 'beta');
    await core.idle();
    assert.deepEqual(
      core.recall.memory().map((entry) => entry.space_id),
      ['beta'],
      'alpha was evicted',
    );
    assert.equal((await snapshotsOf(base, 'alpha')).length, 1, 'alpha was written before it left memory');

    storage.gets.length = 0;
    const after = await search(core, 'alpha');
    assert.deepEqual(after.results, before.results, 'the same answer');
    assert.ok(notesRead(storage.gets, 'alpha') <= 10, 'only the hits are read (their text): no note replayed');
    assert.equal(storage.gets.filter((key) => key.startsWith('alpha/_index/')).length, 1, 'one snapshot read');

    // Loaded from its snapshot and unchanged, alpha leaves again without writing another.
    await search(core, 'beta');
    await core.idle();
    assert.equal((await snapshotsOf(base, 'alpha')).length, 1);
  });

  it('gives back what the corpus cached of an evicted space, listings and texts: read again when searched again', async () => {
    const base = createMemoryDriver();
    await seed(coreOn(base), 'alpha', 5);
    await seed(coreOn(base), 'beta', 5);
    const storage = recordingDriver(base, { versions: true });
    const core = coreOn(storage, 1);
    await search(core, 'alpha');
    storage.gets.length = 0;
    await search(core, 'alpha');
    assert.equal(storage.lists.filter((prefix) => prefix === 'alpha/live/').length, 1, 'the listing is cached while the index stays');
    assert.equal(notesRead(storage.gets, 'alpha'), 0, "and so are its hits' texts");
    await search(core, 'beta');
    await core.idle();
    storage.lists.length = 0;
    storage.gets.length = 0;
    await search(core, 'alpha');
    assert.equal(storage.lists.filter((prefix) => prefix === 'alpha/live/').length, 1, 'evicted, its listing went with it');
    assert.ok(notesRead(storage.gets, 'alpha') > 0, "and its notes' texts");
  });

  it('catches up before the eviction snapshot: a note forgotten since the last search is not written back', async () => {
    const base = createMemoryDriver();
    const other = coreOn(base);
    await seed(other, 'alpha', 20);
    await seed(other, 'beta', 5);
    const written = await other.notes.write(owner, { space_id: 'alpha', category: 'progress', content: 'the zebracorn escaped' });
    const core = coreOn(base, 1);
    assert.equal((await search(core, 'alpha', 'zebracorn')).results.length, 1);
    await other.forget.forget(owner, { space_id: 'alpha', refs: [written.filename], confirm: true, reason: 'test' });
    await search(core, 'beta'); // alpha leaves memory
    await core.idle();
    assert.equal((await snapshotsOf(base, 'alpha')).length, 1, 'alpha was written before it left memory');
    assert.deepEqual(await keysHolding(base, 'zebracorn', 'alpha/_index/'), [], 'without the forgotten note');
    assert.equal((await search(core, 'alpha', 'zebracorn')).results.length, 0);
  });

  it('keeps the sum of the index estimates within the budget across many spaces, most recent kept', async () => {
    const storage = createMemoryDriver();
    const seeder = coreOn(storage);
    const spaces = Array.from({ length: 24 }, (_, i) => `space-${i}`);
    for (const spaceId of spaces) await seed(seeder, spaceId, 6);
    const probe = coreOn(storage);
    await search(probe, 'space-0');
    const one = probe.recall.memory()[0]?.bytes ?? 0;
    assert.ok(one > 5_000, `an index of 6 notes is estimated at ${one} bytes`);

    const budget = Math.round(one * 4.5);
    const core = coreOn(storage, budget);
    for (const spaceId of spaces) {
      const answer = await search(core, spaceId);
      assert.ok(answer.results.length > 0, `${spaceId} answers`);
      const held = core.recall.memory();
      const total = held.reduce((sum, entry) => sum + entry.bytes, 0);
      assert.ok(held.length === 1 || total <= budget, `${held.length} indexes, ${total} bytes, over a budget of ${budget}`);
      assert.equal(held[held.length - 1]?.space_id, spaceId, 'the index just asked for is kept, last');
    }
    const held = core.recall.memory().map((entry) => entry.space_id);
    assert.ok(held.length >= 3 && held.length <= 5, `about four indexes fit: ${held.join(', ')}`);
    assert.deepEqual(held, spaces.slice(-held.length), 'the most recently searched');
    await core.idle();
  });

  it('keeps a space larger than the budget in memory while it is searched', async () => {
    const storage = createMemoryDriver();
    await seed(coreOn(storage), 'big', 30);
    const core = coreOn(storage, 1);
    assert.ok((await search(core, 'big')).results.length > 0);
    assert.ok((await search(core, 'big')).results.length > 0);
    assert.deepEqual(
      core.recall.memory().map((entry) => entry.space_id),
      ['big'],
    );
    await core.idle();
  });
});

describe('snapshot cadence', () => {
  it('a process that replayed many new notes leaves a snapshot at exit: the next replays none of them', async () => {
    const base = createMemoryDriver();
    const writer = coreOn(base);
    await seed(writer, 'proj', 60);
    const first = coreOn(base);
    await search(first, 'proj');
    await first.idle();
    assert.equal((await snapshotsOf(base, 'proj')).length, 1, 'the first build');

    await seed(writer, 'proj', 150, 60); // fewer than the 500 that used to be needed for a snapshot
    const second = recordingDriver(base);
    const catchingUp = coreOn(second);
    await search(catchingUp, 'proj');
    assert.equal(notesRead(second.gets, 'proj') >= 150, true, 'the second process replays the new notes once');
    await catchingUp.idle(); // what a CLI command and the server do before exiting
    assert.equal((await snapshotsOf(base, 'proj')).length, 2, 'and leaves a snapshot of them');

    const third = recordingDriver(base);
    await search(coreOn(third), 'proj');
    assert.ok(notesRead(third.gets, 'proj') <= 10, 'a new process reads only its hits');
  });

  it('catches up before the exit snapshot: a note another process forgot meanwhile is not written back', async () => {
    const base = createMemoryDriver();
    const other = coreOn(base);
    await seed(other, 'proj', 60);
    const core = coreOn(base);
    await search(core, 'proj');
    await core.idle(); // the first build's snapshot
    await seed(other, 'proj', 150, 60); // more than a snapshot's worth of changes to come
    const written = await other.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'the zebracorn escaped' });
    assert.equal((await search(core, 'proj', 'zebracorn')).results.length, 1, 'this process indexed it, snapshot not yet due by time');
    await other.forget.forget(owner, { space_id: 'proj', refs: [written.filename], confirm: true, reason: 'test' });
    await core.idle(); // exits with the unsaved changes, the forgotten note among them
    assert.equal((await snapshotsOf(base, 'proj')).length, 1, 'a snapshot at exit');
    assert.deepEqual(await keysHolding(base, 'zebracorn', 'proj/_index/'), [], 'without the forgotten note');
    assert.deepEqual(await keysHolding(base, written.filename, 'proj/_index/'), [], 'nor its name');
  });

  it('a process that replayed fewer than the tail leaves none, and the next replays at most that tail', async () => {
    const base = createMemoryDriver();
    const writer = coreOn(base);
    await seed(writer, 'proj', 60);
    const first = coreOn(base);
    await search(first, 'proj');
    await first.idle();
    const tail = SNAPSHOT_AFTER_CHANGES - 1;
    await seed(writer, 'proj', tail, 60);
    for (const round of [1, 2]) {
      const storage = recordingDriver(base);
      const core = coreOn(storage);
      await search(core, 'proj', 'zebra');
      await core.idle();
      assert.ok(notesRead(storage.gets, 'proj') <= tail, `round ${round}: ${notesRead(storage.gets, 'proj')} notes read`);
    }
    assert.equal((await snapshotsOf(base, 'proj')).length, 1, 'a tail this short is not worth a snapshot');
  });

  it('a long-running process snapshots once SNAPSHOT_AFTER_CHANGES documents changed', async () => {
    const base = createMemoryDriver();
    const writer = coreOn(base);
    await seed(writer, 'proj', 60);
    const server = coreOn(base);
    await search(server, 'proj');
    await server.idle();
    await seed(writer, 'proj', SNAPSHOT_AFTER_CHANGES, 60);
    // The interval since the first snapshot has not passed: the refresh leaves it to later (or to the exit).
    await search(server, 'proj');
    await server.idle();
    assert.equal((await snapshotsOf(base, 'proj')).length, 2);
  });
});
