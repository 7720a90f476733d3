import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeHistoryNotes } from '../../../src/core/commit/history.js';
import { spaceKeys } from '../../../src/core/layout.js';
import { formatNoteFile } from '../../../src/core/note/note-file.js';
import { formatNoteName, isoSeconds } from '../../../src/core/note-name.js';
import { createCorpus } from '../../../src/core/note/corpus.js';
import { createNeighbours, type NoteNeighbours } from '../../../src/core/recall/neighbours.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { makeCore, owner } from '../../helpers/core.js';

const NOW = Date.parse('2026-02-20T18:00:00.000Z');
const MINUTE = 60_000;
const AGENTS = ['ada', 'bob', 'cy'];
const CID = '20260220T170000-00aaaaaa';

/** Note i, by AGENTS[i % 3], i minutes after an hour before NOW: 0–11 consolidated (one consolidation), 12–19 live. */
async function space() {
  const storage = createMemoryDriver();
  const { core } = makeCore({ storage, clock: () => new Date(NOW) });
  await core.spaces.create(owner, { space_id: 'talk' });
  const keys = spaceKeys('talk');
  const files = Array.from({ length: 20 }, (_, i) => {
    const time = new Date(NOW - 60 * MINUTE + i * MINUTE);
    const agent = AGENTS[i % AGENTS.length] as string;
    const filename = formatNoteName(time, agent, 'observation', i.toString(36).padStart(6, '0'));
    return { filename, body: formatNoteFile({ timestamp: isoSeconds(time), agent, category: 'observation', tags: [], space_id: 'talk' }, `turn ${i}`) };
  });
  const history = files.slice(0, 12);
  await storage.put(keys.historyNotes(CID), encodeHistoryNotes(history.map((file) => ({ filename: file.filename, body: Buffer.from(file.body) }))));
  const record = { id: CID, kind: 'consolidation', committed_at: '', notes: history.map((file) => file.filename), bank_files: [], metrics: {} };
  await storage.put(keys.historyRecord(CID), JSON.stringify(record));
  for (const file of files.slice(12)) await storage.put(keys.note(file.filename), file.body);
  const corpus = createCorpus(core.context);
  const name = (i: number) => (files[i] as { filename: string }).filename;
  /** Note i as a hit names it: with its consolidation when consolidated. */
  const ref = (i: number) => ({ ref: name(i), ...(i < 12 ? { consolidation_id: CID } : {}) });
  return { core, neighbours: createNeighbours(corpus), name, ref };
}

const turns = (found: NoteNeighbours | undefined) => ({
  before: found?.before.map((note) => note.content),
  after: found?.after.map((note) => note.content),
});

describe('neighbours', () => {
  it('gives the notes just before and after a live note and a consolidated one, in time order, across the consolidation', async () => {
    const { neighbours, name, ref } = await space();
    const found = await neighbours.of('talk', [ref(15), ref(4), ref(11), ref(12)], { before: 2, after: 2, by: 'any' });
    assert.deepEqual(turns(found.get(name(15))), { before: ['turn 13', 'turn 14'], after: ['turn 16', 'turn 17'] });
    assert.deepEqual(turns(found.get(name(4))), { before: ['turn 2', 'turn 3'], after: ['turn 5', 'turn 6'] });
    // The last consolidated note's next ones are live, and the first live note's previous ones consolidated.
    assert.deepEqual(turns(found.get(name(11))), { before: ['turn 9', 'turn 10'], after: ['turn 12', 'turn 13'] });
    assert.deepEqual(
      found.get(name(12))?.before.map((note) => [note.content, note.source, note.consolidation_id]),
      [
        ['turn 10', 'history', CID],
        ['turn 11', 'history', CID],
      ],
    );
    assert.equal(found.get(name(12))?.after[0]?.source, 'live');
  });

  it('stops a side at a gap longer than gapMs, in the walk from the note (a side counts its gaps one note to the next)', async () => {
    const { neighbours, name, ref } = await space(); // one note a minute
    const asked = [ref(15), ref(11)];
    const within = await neighbours.of('talk', asked, { before: 2, after: 2, by: 'any', gapMs: 90_000 });
    assert.deepEqual(turns(within.get(name(15))), { before: ['turn 13', 'turn 14'], after: ['turn 16', 'turn 17'] });
    assert.deepEqual(turns(within.get(name(11))), { before: ['turn 9', 'turn 10'], after: ['turn 12', 'turn 13'] }, 'across a consolidation too');
    const apart = await neighbours.of('talk', asked, { before: 2, after: 2, by: 'any', gapMs: 30_000 });
    assert.deepEqual(turns(apart.get(name(15))), { before: [], after: [] });
  });

  it('names the sitting of a note by its first note: bounded by pauses, none in a stream longer than the reach', async () => {
    const storage = createMemoryDriver();
    let now = NOW;
    const { core } = makeCore({ storage, clock: () => new Date(now) });
    await core.spaces.create(owner, { space_id: 'sit' });
    const write = async (minutes: number) => {
      now = NOW + minutes * MINUTE;
      return (await core.notes.write(owner, { space_id: 'sit', category: 'observation', content: `at ${minutes}` })).filename;
    };
    // A sitting of three (a pause of an hour after), a stream of 12 a minute apart, a note alone.
    const morning = [await write(0), await write(5), await write(10)];
    const stream: string[] = [];
    for (let m = 70; m < 82; m++) stream.push(await write(m));
    const alone = await write(200);
    const neighbours = createNeighbours(createCorpus(core.context));
    const refs = [...morning, ...stream, alone].map((ref) => ({ ref }));
    const found = await neighbours.sittings('sit', refs, 30 * MINUTE, 8);
    assert.deepEqual(
      morning.map((ref) => found.get(ref)),
      morning.map(() => morning[0]),
    );
    assert.ok(
      stream.every((ref) => !found.has(ref)),
      'twelve notes without a pause: more than the reach of 8',
    );
    assert.equal(found.get(alone), alone, 'a sitting of one');
    const wide = await neighbours.sittings('sit', refs, 30 * MINUTE, 64);
    assert.ok(
      stream.every((ref) => wide.get(ref) === stream[0]),
      'within a reach of 64, the stream is one sitting',
    );
  });

  it("keeps only the note's own agent's with by: agent", async () => {
    const { neighbours, name, ref } = await space();
    const found = await neighbours.of('talk', [ref(10), ref(8)], { before: 2, after: 2, by: 'agent' });
    // AGENTS[i % 3]: note 10 is bob's, as are 4, 7, 13, 16; note 8 is cy's, as are 2, 5, 11, 14.
    assert.deepEqual(turns(found.get(name(10))), { before: ['turn 4', 'turn 7'], after: ['turn 13', 'turn 16'] });
    assert.deepEqual(turns(found.get(name(8))), { before: ['turn 2', 'turn 5'], after: ['turn 11', 'turn 14'] });
    assert.ok([...found.values()].flatMap((entry) => [...entry.before, ...entry.after]).every((note) => note.agent === 'bob' || note.agent === 'cy'));
  });

  it('gives fewer at the edges of the space, none for an unknown note or a span of 0', async () => {
    const { neighbours, name, ref } = await space();
    const found = await neighbours.of('talk', [ref(0), ref(1), ref(19), { ref: '20260101T000000_ada_observation_00zzzzzz.md' }], {
      before: 3,
      after: 3,
      by: 'any',
    });
    assert.deepEqual(turns(found.get(name(0))), { before: [], after: ['turn 1', 'turn 2', 'turn 3'] });
    assert.deepEqual(turns(found.get(name(1))), { before: ['turn 0'], after: ['turn 2', 'turn 3', 'turn 4'] });
    assert.deepEqual(turns(found.get(name(19))), { before: ['turn 16', 'turn 17', 'turn 18'], after: [] });
    assert.equal(found.size, 3);
    assert.equal((await neighbours.of('talk', [ref(5)], { before: 0, after: 0, by: 'any' })).size, 0);
  });

  it('sees a note written since, and no longer a forgotten one', async () => {
    const { core, neighbours, name, ref } = await space();
    assert.deepEqual(turns((await neighbours.of('talk', [ref(19)], { before: 1, after: 1, by: 'any' })).get(name(19))), { before: ['turn 18'], after: [] });
    await core.notes.write(owner, { space_id: 'talk', agent: 'ada', category: 'observation', content: 'turn 20' });
    await core.forget.forget(owner, { space_id: 'talk', refs: [name(18), name(3)], confirm: true, reason: 'test' });
    const found = await neighbours.of('talk', [ref(19), ref(4), ref(18)], { before: 1, after: 1, by: 'any' });
    assert.deepEqual(turns(found.get(name(19))), { before: ['turn 17'], after: ['turn 20'] });
    assert.deepEqual(turns(found.get(name(4))), { before: ['turn 2'], after: ['turn 5'] });
    assert.equal(found.has(name(18)), false);
  });

  it('come with memory_search hits when asked (neighbours: n), refs and texts in time order, live or consolidated', async () => {
    const { core, name } = await space();
    const plain = await core.recall.search(owner, { space_id: 'talk', query: '15' });
    assert.equal(plain.results[0]?.ref, name(15));
    assert.ok(plain.results.every((hit) => !('before' in hit) && !('after' in hit)));
    const live = await core.recall.search(owner, { space_id: 'talk', query: '15', neighbours: 2 });
    const hit = live.results[0] as (typeof live.results)[number] & { before: Array<Record<string, unknown>>; after: Array<Record<string, unknown>> };
    assert.equal(hit.ref, name(15));
    assert.deepEqual(
      hit.before.map((note) => [note.ref, note.text, note.agent]),
      [
        [name(13), 'turn 13', 'bob'],
        [name(14), 'turn 14', 'cy'],
      ],
    );
    assert.deepEqual(
      hit.after.map((note) => note.ref),
      [name(16), name(17)],
    );
    const consolidated = await core.recall.search(owner, { space_id: 'talk', query: '11', neighbours: 1 });
    const eleven = consolidated.results[0] as (typeof live.results)[number] & { before: Array<Record<string, unknown>>; after: Array<Record<string, unknown>> };
    assert.deepEqual([eleven.source, eleven.ref], ['history', name(11)]);
    assert.deepEqual([eleven.before[0]?.text, eleven.before[0]?.consolidation_id], ['turn 10', CID]);
    assert.deepEqual([eleven.after[0]?.text, eleven.after[0]?.consolidation_id], ['turn 12', undefined]);
    for (const neighbours of [-1, 6, 1.5]) {
      await assert.rejects(core.recall.search(owner, { space_id: 'talk', query: '15', neighbours }), (error) => isLiveMemError(error, 'invalid_input'));
    }
  });
});
