/**
 * The corpus's caches under the index memory budget (issue 31): history bundles, records, note texts
 * and pre-images take their share of LIVE_MEM_INDEX_MEMORY_MB, least recently used dropped, and
 * leave with their space's index. A process whose caches are evicted at every turn answers what one
 * that keeps everything answers — hits, scores, neighbours — and pays in store reads only: the
 * bundles read again, never a note replayed or a record read for the ranking (the timeline is kept
 * with the index, and in its snapshot when the index itself is evicted and loaded again).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeHistoryNotes } from '../../../src/core/commit/history.js';
import { createCore, type Core } from '../../../src/core/core.js';
import { spaceKeys } from '../../../src/core/layout.js';
import { formatNoteName, isoSeconds } from '../../../src/core/note-name.js';
import { formatNoteFile } from '../../../src/core/note/note-file.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { recordingDriver } from '../../helpers/recording-driver.js';

const CONSOLIDATIONS = 6;
const PER_CONSOLIDATION = 120;
const START = Date.parse('2026-02-01T09:00:00.000Z');
const FILLER = ['albatross', 'petrel', 'gannet', 'tern', 'skua', 'fulmar', 'shearwater', 'cormorant', 'puffin', 'guillemot'];

/** Note n of the space: a topic word shared across consolidations, and about 2 KB of text of its own. */
function noteBody(n: number): string {
  const words = Array.from({ length: 260 }, (_, w) => `${FILLER[(n * 7 + w * 3) % FILLER.length]}${(n * 31 + w) % 97}`);
  return `Turn ${n}: the kestrel${n % 12} pipeline met heron${n % 5}. ${words.join(' ')}`;
}

/**
 * A space of CONSOLIDATIONS consolidations of PER_CONSOLIDATION notes each (a notes.json of about
 * 300 KB: a bundle weighs more than half the smallest cache's share), written straight into the
 * store, a note a minute, then 10 live notes.
 */
async function seed(storage: StorageDriver): Promise<void> {
  await createCore({ storage }).spaces.create(owner, { space_id: 'talk' });
  await createCore({ storage }).spaces.create(owner, { space_id: 'other' });
  const keys = spaceKeys('talk');
  const file = (n: number) => {
    const time = new Date(START + n * 60_000);
    const agent = n % 2 === 0 ? 'ada' : 'bob';
    const filename = formatNoteName(time, agent, 'observation', n.toString(36).padStart(6, '0'));
    return { filename, body: formatNoteFile({ timestamp: isoSeconds(time), agent, category: 'observation', tags: [], space_id: 'talk' }, noteBody(n)) };
  };
  for (let c = 0; c < CONSOLIDATIONS; c++) {
    const cid = `20260202T0${c}0000-0000000${c}`;
    const notes = Array.from({ length: PER_CONSOLIDATION }, (_, i) => file(c * PER_CONSOLIDATION + i));
    await storage.put(keys.historyNotes(cid), encodeHistoryNotes(notes.map((note) => ({ filename: note.filename, body: Buffer.from(note.body) }))));
    const record = { id: cid, kind: 'consolidation', committed_at: '', notes: notes.map((note) => note.filename), bank_files: [], metrics: {} };
    await storage.put(keys.historyRecord(cid), JSON.stringify(record));
  }
  for (let i = 0; i < 10; i++) {
    const note = file(CONSOLIDATIONS * PER_CONSOLIDATION + i);
    await storage.put(keys.note(note.filename), note.body);
  }
  const other = createCore({ storage });
  await other.notes.write(owner, { space_id: 'other', category: 'progress', content: 'The kestrel pipeline of another space' });
}

const QUERIES = ['kestrel3 heron1', 'kestrel7 pipeline', 'heron4 kestrel11', 'petrel5 gannet', 'puffin40 kestrel0'];

/** Every query's hits with their scores and their neighbours (two a side), as memory_search returns them. */
async function answers(core: Core) {
  const all = [];
  for (const query of QUERIES) {
    const { results } = await core.recall.search(owner, { space_id: 'talk', query, limit: 8, neighbours: 2 });
    all.push(results);
  }
  return all;
}

const bundlesRead = (gets: string[]) => gets.filter((key) => key.startsWith('talk/history/') && key.endsWith('/notes.json')).length;
const recordsRead = (gets: string[]) => gets.filter((key) => key.startsWith('talk/history/') && key.endsWith('/record.json')).length;
const liveRead = (gets: string[]) => gets.filter((key) => key.startsWith('talk/live/')).length;

describe('the corpus caches under the index memory budget', () => {
  it('answer the same with their entries evicted at every turn, reading the bundles again and nothing else, also after the index is evicted and loaded again', async () => {
    const base = createMemoryDriver();
    await seed(base);

    const roomy = createCore({ storage: base });
    const expected = await answers(roomy);
    assert.ok(
      expected.every((hits) => hits.length === 8),
      'every query finds 8 hits',
    );
    assert.ok(
      expected.flat().some((hit) => hit.source === 'history'),
      'history notes among them',
    );
    await roomy.idle();

    // A budget of one byte: each cache keeps its least (1 MB), which holds one bundle at a time.
    const storage = recordingDriver(base);
    const tight = createCore({ storage, indexMemoryBytes: 1 });
    assert.deepEqual(await answers(tight), expected);
    storage.gets.length = 0;
    assert.deepEqual(await answers(tight), expected, 'asked again, its caches evicted meanwhile');
    assert.ok(bundlesRead(storage.gets) > CONSOLIDATIONS, `the bundles read again (${bundlesRead(storage.gets)} reads)`);
    assert.equal(recordsRead(storage.gets), 0, 'no record read: the timeline stays with the index');
    assert.ok(liveRead(storage.gets) <= 10);

    // The roomy process, asked again, reads nothing: what the tight one reads is what its budget costs.
    const roomyStorage = recordingDriver(base);
    const roomyAgain = createCore({ storage: roomyStorage });
    await answers(roomyAgain);
    roomyStorage.gets.length = 0;
    assert.deepEqual(await answers(roomyAgain), expected);
    assert.equal(bundlesRead(roomyStorage.gets), 0);

    // Another space asked for: talk's index leaves memory (its snapshot written first), and its caches with it.
    await tight.recall.search(owner, { space_id: 'other', query: 'kestrel' });
    await tight.idle();
    assert.deepEqual(
      tight.recall.memory().map((entry) => entry.space_id),
      ['other'],
    );
    storage.gets.length = 0;
    assert.deepEqual(await answers(tight), expected, 'loaded again from its snapshot');
    assert.equal(storage.gets.filter((key) => key.startsWith('talk/_index/') && key.endsWith('.snapshot')).length, 1, 'one snapshot read');
    // Neighbours are named from their consolidation's record (the timeline keeps times and name hashes): each read once.
    const records = storage.gets.filter((key) => key.endsWith('/record.json'));
    assert.ok(records.length <= CONSOLIDATIONS && new Set(records).size === records.length, `records read: ${records.join(', ')}`);
    assert.ok(liveRead(storage.gets) <= 10, 'no live note replayed beyond the hits');

    // Evicted and loaded again once more: the ranking alone (no neighbours) reads no record at all.
    await tight.recall.search(owner, { space_id: 'other', query: 'kestrel' });
    await tight.idle();
    storage.gets.length = 0;
    for (const [i, query] of QUERIES.entries()) {
      const { results } = await tight.recall.search(owner, { space_id: 'talk', query, limit: 8 });
      assert.deepEqual(
        results.map((hit) => [hit.ref, hit.score]),
        expected[i]?.map((hit) => [hit.ref, hit.score]),
      );
    }
    assert.equal(recordsRead(storage.gets), 0, 'the timeline came with the snapshot');
    await tight.idle();
  });
});
