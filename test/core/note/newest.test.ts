import assert from 'node:assert/strict';
import { utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeHistoryNotes } from '../../../src/core/commit/history.js';
import { spaceKeys } from '../../../src/core/layout.js';
import { formatNoteFile } from '../../../src/core/note/note-file.js';
import { compareNewestFirst, formatNoteName, isoSeconds, parseNoteName, type NoteName } from '../../../src/core/note-name.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { createCorpus } from '../../../src/core/note/corpus.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { makeCore, owner } from '../../helpers/core.js';
import { tempDir } from '../../helpers/tmp.js';

const NOW = Date.parse('2026-02-20T18:00:00.000Z');
const MINUTE = 60_000;
const AGENTS = ['ada', 'bob', 'cy'];
const CATEGORIES = ['observation', 'decision', 'todo'] as const;

/** A note file of the space at a time: its key and body, as a live_note would have written it. */
function noteFile(spaceId: string, ms: number, i: number) {
  const time = new Date(ms);
  const agent = AGENTS[i % AGENTS.length] as string;
  const category = CATEGORIES[i % CATEGORIES.length] as (typeof CATEGORIES)[number];
  const filename = formatNoteName(time, agent, category, i.toString(36).padStart(6, '0'));
  const body = formatNoteFile({ timestamp: isoSeconds(time), agent, category, tags: [], space_id: spaceId }, `note ${i} by ${agent}`);
  return { filename, key: spaceKeys(spaceId).note(filename), body };
}

/** A driver that counts every call and every object a listing returned. */
function metered(driver: StorageDriver) {
  const counts = { calls: 0, listed: 0, gets: 0 };
  const call = <T>(run: () => T): T => {
    counts.calls++;
    return run();
  };
  const wrapped: StorageDriver = {
    ...driver,
    name: driver.name,
    location: driver.location,
    parallelism: driver.parallelism,
    get: (key) => {
      counts.gets++;
      return call(() => driver.get(key));
    },
    stat: (key) => call(() => driver.stat(key)),
    put: (key, body, options) => call(() => driver.put(key, body, options)),
    delete: (key) => call(() => driver.delete(key)),
    deleteMany: (keys) => call(() => driver.deleteMany(keys)),
    list: async (prefix, options) => {
      counts.calls++;
      const page = await driver.list(prefix, options);
      counts.listed += page.objects.length + page.prefixes.length;
      return page;
    },
  };
  return { driver: wrapped, counts, reset: () => Object.assign(counts, { calls: 0, listed: 0, gets: 0 }) };
}

/**
 * A space of `total` live notes one minute apart up to NOW, written straight into the store (a
 * live_note per note would only be slower), and a core over it, as a new process would start.
 */
async function seededSpace(total: number) {
  const base = createMemoryDriver();
  const { core: setup } = makeCore({ storage: base, clock: () => new Date(NOW) });
  await setup.spaces.create(owner, { space_id: 'big' });
  for (let i = 0; i < total; i++) {
    const file = noteFile('big', NOW - (total - i) * MINUTE, i);
    await base.put(file.key, file.body);
  }
  const meter = metered(base);
  const { core } = makeCore({ storage: meter.driver, clock: () => new Date(NOW) });
  return { core, meter };
}

describe('newest-N paths cost what is asked, not the space', () => {
  it('memory_context and live_read make the same storage calls at 5,000 and 50,000 notes', async () => {
    const cost: Array<Record<string, number>> = [];
    for (const total of [5_000, 50_000]) {
      const { core, meter } = await seededSpace(total);
      const context = await core.recall.context(owner, { space_id: 'big' });
      const contextCost = { ...meter.counts };
      meter.reset();
      const read = await core.notes.read(owner, { space_id: 'big', limit: 20 });
      const readCost = { ...meter.counts };
      meter.reset();
      const page = await core.notes.read(owner, { space_id: 'big', limit: 20, before: read.notes[19]!.filename, category: 'decision' });
      const pageCost = { ...meter.counts };

      assert.match(context.text, new RegExp(`note ${total - 1} by`));
      assert.equal(read.notes[0]!.filename, noteFile('big', NOW - MINUTE, total - 1).filename);
      assert.equal(read.has_more, true);
      assert.equal(page.notes.length, 20);
      assert.ok(page.notes.every((note) => note.category === 'decision'));
      cost.push({
        context_calls: contextCost.calls,
        context_listed: contextCost.listed,
        context_gets: contextCost.gets,
        read_calls: readCost.calls,
        read_listed: readCost.listed,
        page_calls: pageCost.calls,
        page_listed: pageCost.listed,
      });
    }
    assert.deepEqual(cost[1], cost[0], JSON.stringify(cost));
    // Bounded by what was asked: 30 recent notes and 21 names, not thousands of entries.
    assert.ok((cost[0]?.context_listed ?? Infinity) < 200, JSON.stringify(cost[0]));
    assert.ok((cost[0]?.context_gets ?? Infinity) <= 40, JSON.stringify(cost[0]));
  });

  it('live_read answers as a sort of every name did: filters, since, before pages, notes years old and ahead of the clock', async () => {
    const storage = createMemoryDriver();
    const { core } = makeCore({ storage, clock: () => new Date(NOW) });
    await core.spaces.create(owner, { space_id: 'mix' });
    // Times from ten years back to a day ahead (another machine's clock), clustered and sparse.
    const offsets = [
      -10 * 365 * 24 * 60,
      -5 * 365 * 24 * 60,
      -400 * 24 * 60,
      -30 * 24 * 60,
      -3 * 24 * 60,
      -600,
      -61,
      -60,
      -59,
      -30,
      -1,
      0,
      60,
      24 * 60,
    ].flatMap((minutes, j) => [0, 1, 2].map((k) => minutes * MINUTE - k * 1000 - j));
    for (const [i, offset] of offsets.entries()) {
      const file = noteFile('mix', NOW + offset, i);
      await storage.put(file.key, file.body);
    }
    const all = (await listKeys(storage, spaceKeys('mix').live))
      .map((key) => parseNoteName(key.slice(key.lastIndexOf('/') + 1)))
      .filter((name): name is NoteName => name !== null)
      .sort(compareNewestFirst);
    const expected = (limit: number, keep: (name: NoteName) => boolean) => {
      const matches = all.filter(keep);
      return { names: matches.slice(0, limit).map((name) => name.filename), has_more: matches.length > limit };
    };
    const cases: Array<{ input: Record<string, unknown>; keep: (name: NoteName) => boolean }> = [];
    for (const limit of [1, 2, 5, 13, 100]) {
      cases.push({ input: { limit }, keep: () => true });
      cases.push({ input: { limit, category: 'decision' }, keep: (name) => name.category === 'decision' });
      cases.push({ input: { limit, agent: 'cy', category: 'todo' }, keep: (name) => name.agent === 'cy' && name.category === 'todo' });
      for (const since of ['2026-02-20T16:59:00Z', '2025-01-01T00:00:00Z', '2030-01-01T00:00:00Z']) {
        const stamp = since.replace(/[-:Z]/g, '');
        cases.push({ input: { limit, since }, keep: (name) => name.stamp >= stamp });
      }
      for (const at of [0, 3, 20, all.length - 2]) {
        const before = all[at] as NoteName;
        cases.push({ input: { limit, before: before.filename }, keep: (name) => compareNewestFirst(name, before) > 0 });
        cases.push({
          input: { limit, before: before.filename, agent: 'ada' },
          keep: (name) => compareNewestFirst(name, before) > 0 && name.agent === 'ada',
        });
      }
    }
    for (const { input, keep } of cases) {
      const limit = input.limit as number;
      const read = await core.notes.read(owner, { space_id: 'mix', ...input });
      assert.deepEqual({ names: read.notes.map((note) => note.filename), has_more: read.has_more }, expected(limit, keep), JSON.stringify(input));
    }
  });

  it('memory_context takes its recent notes from live/ and the consolidations that may hold newer ones', async () => {
    const storage = createMemoryDriver();
    const { core } = makeCore({ storage, clock: () => new Date(NOW) });
    await core.spaces.create(owner, { space_id: 'hist' });
    const keys = spaceKeys('hist');
    // Two old consolidations, one recent one holding notes newer than some still live, and a few live notes.
    const consolidations = [
      { cid: '20250101T000000-00aaaaaa', from: -600 * 24 * 60, count: 20 },
      { cid: '20250601T000000-00bbbbbb', from: -300 * 24 * 60, count: 20 },
      { cid: '20260220T175000-00cccccc', from: -40, count: 20 },
    ];
    let i = 0;
    for (const { cid, from, count } of consolidations) {
      const notes = Array.from({ length: count }, (_, k) => noteFile('hist', NOW + (from + k) * MINUTE, i++));
      await storage.put(keys.historyNotes(cid), encodeHistoryNotes(notes.map((note) => ({ filename: note.filename, body: Buffer.from(note.body) }))));
      const record = { id: cid, kind: 'consolidation', committed_at: '', notes: notes.map((note) => note.filename), bank_files: [], metrics: {} };
      await storage.put(keys.historyRecord(cid), JSON.stringify(record));
    }
    // Live notes interleaved with the newest consolidation's (written meanwhile by a slower clock), and after it.
    for (const minutes of [-35, -30, -25, -10, -5, -1]) {
      const file = noteFile('hist', NOW + minutes * MINUTE, i++);
      await storage.put(file.key, file.body);
    }
    const context = await core.recall.context(owner, { space_id: 'hist', max_tokens: 20_000 });
    const recent = context.text
      .split('## Recent notes (newest first)\n')[1]!
      .split('\n\n')[0]!
      .split('\n')
      .filter((line) => line.startsWith('- '));
    assert.equal(recent.length, 30);
    // The 30 newest of all 66: the 6 live ones and the newest 24 consolidated, in time order.
    const numbers = recent.map((line) => Number(/\] note (\d+) by/.exec(line)?.[1]));
    const byTime = [
      ...Array.from({ length: 60 }, (_, k) => ({ n: k, at: consolidations[Math.floor(k / 20)]!.from + (k % 20) })),
      ...[-35, -30, -25, -10, -5, -1].map((at, k) => ({ n: 60 + k, at })),
    ]
      .sort((a, b) => b.at - a.at || b.n - a.n)
      .slice(0, 30)
      .map((note) => note.n);
    assert.deepEqual(numbers, byTime);
    assert.ok(recent.filter((line) => line.includes(', consolidated]')).length > 0);
  });

  it('a listing of live/ read again unchanged gives back the same names; a changed one parses only its new names', async () => {
    const storage = createMemoryDriver(); // no folder versions: every read lists live/ again
    const { core } = makeCore({ storage, clock: () => new Date(NOW) });
    await core.spaces.create(owner, { space_id: 'again' });
    for (let i = 0; i < 50; i++) await core.notes.write(owner, { space_id: 'again', category: 'todo', content: `note ${i}` });
    const corpus = createCorpus(core.context);
    const first = await corpus.liveNames('again');
    assert.equal(await corpus.liveNames('again'), first, 'the same array: readers keyed on it skip their work');
    const written = await core.notes.write(owner, { space_id: 'again', category: 'todo', content: 'the newest' });
    const second = await corpus.liveNames('again');
    assert.notEqual(second, first);
    assert.equal(second.length, 51);
    assert.equal(second.at(-1)?.filename, written.filename);
    assert.ok(
      second.slice(0, 50).every((name, i) => name === first[i]),
      'the names read before are the same objects, not parsed again',
    );
  });

  it('on fs, a read of an unchanged live/ lists nothing again; a new note is seen by the next read', async () => {
    const tmp = await tempDir();
    try {
      const fs = createFsDriver(tmp.dir);
      const { core: setup } = makeCore({ storage: fs, clock: () => new Date(NOW) });
      await setup.spaces.create(owner, { space_id: 'disk' });
      for (let i = 0; i < 200; i++) {
        const file = noteFile('disk', NOW - (200 - i) * MINUTE, i);
        await fs.put(file.key, file.body);
      }
      // The folder's mtime vouches for its listing only once it is a few seconds old.
      const hourAgo = new Date(NOW - 60 * MINUTE);
      await utimes(path.join(tmp.dir, 'disk', 'live'), hourAgo, hourAgo);
      const meter = metered(fs);
      const { core } = makeCore({ storage: meter.driver, clock: () => new Date(NOW) });
      const first = await core.notes.read(owner, { space_id: 'disk', limit: 10 });
      assert.ok(meter.counts.listed > 0);
      meter.reset();
      const again = await core.notes.read(owner, { space_id: 'disk', limit: 10 });
      assert.deepEqual(again, first);
      assert.equal(meter.counts.listed, 0);
      const written = await core.notes.write(owner, { space_id: 'disk', category: 'todo', content: 'the newest' });
      const after = await core.notes.read(owner, { space_id: 'disk', limit: 10 });
      assert.equal(after.notes[0]?.filename, written.filename);
    } finally {
      await tmp.remove();
    }
  });
});
