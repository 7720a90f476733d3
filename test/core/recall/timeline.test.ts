/**
 * The timeline's record of what the retention check did not find whole (recall/timeline.ts): kept by
 * note name per consolidation, in the snapshot's timeline section, taken out by a forget; a section of
 * the earlier version is refused (and so placed again from the records). End to end: a memory_search
 * hit on a note a consolidation lost part of says so, in a new process loaded from the snapshot too,
 * without any consolidation record read.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import { type NoteName, parseNoteName } from '../../../src/core/note-name.js';
import { decodeTimeline, Timeline, unretainedNotes } from '../../../src/core/recall/timeline.js';
import type { NoteRetention, RetentionEntry } from '../../../src/core/retention/record.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { fencedNotes } from '../../helpers/obedient-llm.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const A = '20260401T090000_cline_decision_a1b2c3d4.md';
const B = '20260401T090001_cline_progress_b1b2c3d4.md';
const C = '20260401T090002_cline_issue_c1b2c3d4.md';
const partly: NoteRetention = { status: 'partly_retained', items: 3, missing: [{ kind: 'number', text: '8443' }] };
const entries: RetentionEntry[] = [
  { note: A, status: 'retained', items: 2 },
  { note: B, ...partly },
  { note: C, status: 'let_go', items: 1 },
];

describe('the timeline keeps the notes not wholly retained', () => {
  it('by name, from the record, through the snapshot section, and not past a forget', () => {
    const timeline = new Timeline();
    const unretained = unretainedNotes({ kind: 'consolidation', retention: entries });
    assert.deepEqual([...unretained.keys()], [B, C], 'a retained note is not kept');
    timeline.place('20260401T100000-aaaaaa', [A, B, C], unretained);
    timeline.place('20260401T110000-bbbbbb', [], unretainedNotes({ kind: 'compaction', retention: [] }));
    assert.deepEqual(timeline.retentionOf('20260401T100000-aaaaaa', B), partly);
    assert.equal(timeline.retentionOf('20260401T100000-aaaaaa', A), undefined);
    assert.equal(timeline.retentionOf('20260401T110000-bbbbbb', B), undefined, 'another consolidation');

    const loaded = Timeline.decode(timeline.encode());
    assert.deepEqual(loaded.retentionOf('20260401T100000-aaaaaa', B), partly);
    assert.equal(loaded.retentionOf('20260401T100000-aaaaaa', C)?.status, 'let_go');
    assert.equal(loaded.retentionOf('20260401T100000-aaaaaa', A), undefined);

    loaded.forget([B], ['20260401T100000-aaaaaa']);
    assert.equal(loaded.retentionOf('20260401T100000-aaaaaa', B), undefined, 'a forgotten note takes its retention with it');
    assert.equal(Timeline.decode(loaded.encode()).retentionOf('20260401T100000-aaaaaa', B), undefined);
    loaded.drop('20260401T100000-aaaaaa');
    assert.equal(loaded.retentionOf('20260401T100000-aaaaaa', C), undefined);
  });

  it('refuses a section of the earlier version or whose notes do not add up, so the records place it again', () => {
    const timeline = new Timeline();
    timeline.place('20260401T100000-aaaaaa', [A, B], unretainedNotes({ kind: 'consolidation', retention: entries }));
    const bytes = timeline.encode();
    const earlier = Buffer.from(bytes);
    earlier.writeUInt32LE(1, 4);
    assert.throws(() => decodeTimeline(earlier), /version 1/);
    assert.throws(() => decodeTimeline(bytes.subarray(0, bytes.length - 4)), /timeline section rejected/);
    const foreign = Buffer.from(bytes);
    const at = foreign.indexOf('aaaaaa"', 0, 'latin1');
    foreign.write('zzzzzz"', at, 'latin1');
    assert.throws(() => decodeTimeline(foreign), /not placed/);
  });
});

describe('a memory_search hit on a note a consolidation lost part of', () => {
  /** A model that keeps each note in its own section but drops its port number. */
  const dropsPorts = {
    dynamic: (messages: Array<{ role: string; content: string }>) => {
      const notes = fencedNotes(messages);
      const sections = notes.map((note, i) => `## Note ${i + 1}\n\n${note.replace(/\bport \d+/, 'a port')}\n`);
      return JSON.stringify({
        files: [{ filename: 'techContext.md', action: 'create', content: `# Tech Context\n\n${sections.join('\n')}`, sources: notes.map((_, i) => i + 1) }],
        synthesis: 'The team recorded its setup.',
      });
    },
  };

  const coreOn = async (storage: StorageDriver) => {
    const llm = await startScriptedLlm([dropsPorts, dropsPorts, dropsPorts]);
    servers.push(llm);
    return createCore({
      storage,
      clock: steppingClock('2026-04-01T09:00:00.000Z', 1000),
      llm: llm.client(),
      retention: 'report',
      consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
    });
  };

  it('says so, and a new process says so from the snapshot without reading a record', async () => {
    const storage = createMemoryDriver();
    const core = await coreOn(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'The albatross gateway listens on port 8443 behind nginx.' });
    await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: 'The petrel cache warms up before the nightly export.' });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const search = async (on: typeof core) =>
      (await on.recall.search(owner, { space_id: 'proj', query: 'albatross gateway petrel cache', sources: ['history'], limit: 5 })).results;

    const first = await search(core);
    const albatross = first.find((hit) => hit.text.includes('albatross'));
    const petrel = first.find((hit) => hit.text.includes('petrel'));
    assert.equal(albatross?.retention?.status, 'partly_retained');
    assert.ok(
      albatross?.retention?.missing?.some((item) => item.text === '8443'),
      JSON.stringify(albatross?.retention),
    );
    assert.ok(petrel, 'the note kept whole is found');
    assert.equal(petrel?.retention, undefined, 'a note kept whole says nothing');
    await (await core.recall.indexOf('proj')).saveSnapshot();

    const gets: string[] = [];
    const recording = Object.assign(Object.create(storage) as StorageDriver, {
      get: (key: string, ...rest: unknown[]) => {
        gets.push(key);
        return (storage.get as (...a: unknown[]) => unknown).call(storage, key, ...rest);
      },
    }) as StorageDriver;
    const reader = await coreOn(recording);
    assert.deepEqual(await search(reader), first);
    assert.deepEqual(
      gets.filter((key) => key.endsWith('/record.json')),
      [],
      'the timeline came with the snapshot, the retention with it',
    );
  });
});

describe('sittings on the timeline', () => {
  /** Note names a random 1 to 50 minutes apart, over three consolidations and live/. */
  function randomTimeline(seed: number): { timeline: Timeline; times: number[] } {
    let state = seed;
    const next = (): number => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').slice(0, 15);
    const names: string[] = [];
    const times: number[] = [];
    let at = Date.parse('2026-04-01T09:00:00Z');
    for (let i = 0; i < 120; i++) {
      at += (next() < 0.7 ? 1 + Math.floor(next() * 10) : 31 + Math.floor(next() * 60)) * 60_000;
      names.push(`${stamp(at)}_ada_observation_${i.toString(36).padStart(6, '0')}.md`);
      times.push(at);
    }
    const timeline = new Timeline();
    timeline.place('20260501T000000-aaaaaa', names.slice(0, 40));
    timeline.place('20260502T000000-bbbbbb', names.slice(40, 70));
    timeline.place('20260503T000000-cccccc', names.slice(70, 100));
    timeline.setLive(names.slice(100).map((filename) => parseNoteName(filename) as NoteName));
    return { timeline, times };
  }

  /** The sittings by their definition: runs with no pause over 30 minutes, none when longer than the reach. */
  function expected(times: number[], reach: number): number[] {
    const out: number[] = [];
    for (let start = 0; start < times.length; ) {
      let end = start;
      while (end + 1 < times.length && (times[end + 1] as number) - (times[end] as number) <= 30 * 60_000) end++;
      for (let q = start; q <= end; q++) out.push(end - start + 1 > reach ? -1 : start);
      start = end + 1;
    }
    return out;
  }

  it('names each place by its sitting whatever the order places are asked in, remembered from walk to walk', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { timeline, times } = randomTimeline(seed);
      for (const reach of [3, 8, 64]) {
        const want = expected(times, reach);
        const places = timeline.places();
        let state = seed * 7 + reach;
        const order = times.map((_, i) => i).sort(() => ((state = (state * 1103515245 + 12345) % 2147483648) % 3) - 1);
        for (const place of order) assert.equal(places.sittingOf(place, 30 * 60_000, reach), want[place], `seed ${seed}, reach ${reach}, place ${place}`);
        for (const place of order) assert.equal(places.sittingOf(place, 30 * 60_000, reach), want[place], 'asked again, from what was remembered');
      }
      assert.equal(timeline.places().sittingOf(-1, 30 * 60_000, 8), -1, 'no place, no sitting');
    }
  });
});
