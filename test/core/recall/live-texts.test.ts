import assert from 'node:assert/strict';
import { utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeHistoryNotes } from '../../../src/core/commit/history.js';
import { spaceKeys } from '../../../src/core/layout.js';
import { compareNewestFirst, parseNoteName, type NoteName } from '../../../src/core/note-name.js';
import { toNoteView, type NoteView } from '../../../src/core/note/note-view.js';
import { createLiveTexts, decodeLiveTexts, encodeLiveTexts } from '../../../src/core/recall/live-texts.js';
import { matchesNeedle, searchableTexts } from '../../../src/core/note/note-text.js';
import { listKeys } from '../../../src/storage/list.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { makeCore, owner } from '../../helpers/core.js';
import { makeS3Harness, requireS3OrSkip } from '../../helpers/s3.js';
import { tempDir } from '../../helpers/tmp.js';

const SPACE = 'tricky';
const live = spaceKeys(SPACE).live;

/** Contents where a substring search is easy to get subtly wrong: mid-word, punctuation, accents, case, lines. */
const CONTENTS = [
  'Über-Café résumé for the naïve reader',
  'call foo.bar(baz) then [qux]{1,2}',
  'multi\nline\ntext with a\ttab',
  'MiXeD CaSe WoRdS and snake_case_word',
  '100% sure?! (maybe) — em dash',
  'emoji 🎉 party and ÉTÉ in capitals',
  'deployment of the zebracorn service',
  'plain note about nothing much',
];
const TAGS = [['Deploy'], ['été', 'x'], [], ['MiXed']];
const QUERIES = ['é', 'CAFÉ', 'bar(b', 'line\ntext', 'ixed ca', '%', '🎉', 'deploy', 'été', 'e', 'note', '[qux]', 'zzz-nothing', 'orn ser'];

/** Records which note bodies are read. */
function recording(driver: StorageDriver) {
  const read: string[] = [];
  const wrapped: StorageDriver = {
    ...driver,
    name: driver.name,
    location: driver.location,
    parallelism: driver.parallelism,
    get: (key) => {
      if (key.startsWith(live)) read.push(key.slice(live.length));
      return driver.get(key);
    },
  };
  return { driver: wrapped, read };
}

/** Every live note, newest first, read body by body as the old live_search did. */
async function readEveryNote(storage: StorageDriver): Promise<NoteView[]> {
  const names = (await listKeys(storage, live))
    .map((key) => parseNoteName(key.slice(live.length)))
    .filter((name): name is NoteName => name !== null)
    .sort(compareNewestFirst);
  const views: NoteView[] = [];
  for (const name of names) {
    const object = await storage.get(spaceKeys(SPACE).note(name.filename));
    if (object) views.push(toNoteView(name, object.body));
  }
  return views;
}

/** live_search as it was, a scan of every body: live notes only, newest first, case-insensitive substring. */
function oldScan(views: NoteView[], query: string, limit: number) {
  const needle = query.toLowerCase();
  const found = views.filter((view) => [view.content, ...view.tags].some((text) => text.toLowerCase().includes(needle)));
  return { notes: found.slice(0, limit), has_more: found.length > limit };
}

async function writeNotes(core: ReturnType<typeof makeCore>['core'], count: number, from: number): Promise<string[]> {
  const filenames: string[] = [];
  for (let i = from; i < from + count; i++) {
    const content = `${CONTENTS[i % CONTENTS.length]} #${i}`;
    const tags = TAGS[i % TAGS.length] as string[];
    filenames.push((await core.notes.write(owner, { space_id: SPACE, category: 'observation', content, tags })).filename);
  }
  return filenames;
}

/** What a consolidation leaves in the store: the notes in a history entry, gone from live/. */
async function consolidate(storage: StorageDriver, cid: string, filenames: string[]) {
  const keys = spaceKeys(SPACE);
  const notes = [];
  for (const filename of filenames) notes.push({ filename, body: (await storage.get(keys.note(filename)))!.body });
  await storage.put(keys.historyNotes(cid), encodeHistoryNotes(notes));
  const record = { id: cid, kind: 'consolidation', committed_at: new Date().toISOString(), notes: filenames, bank_files: [], metrics: {} };
  await storage.put(keys.historyRecord(cid), JSON.stringify(record));
  for (const filename of filenames) await storage.delete(keys.note(filename));
}

async function assertSameAsScan(core: ReturnType<typeof makeCore>['core'], storage: StorageDriver) {
  const views = await readEveryNote(storage); // once: on radosgw a read per query and limit took minutes
  for (const query of QUERIES) {
    for (const limit of [1, 3, 20, 1000]) {
      const answer = await core.notes.search(owner, { space_id: SPACE, query, limit });
      const expected = oldScan(views, query, limit);
      assert.deepEqual({ notes: answer.notes, has_more: answer.has_more }, expected, `query ${JSON.stringify(query)}, limit ${limit}`);
      assert.equal(answer.total, expected.notes.length);
    }
  }
}

/** A snapshot of the space written by a first process, which wrote 60 notes and forgot one. */
async function storeWithSnapshot(base: StorageDriver = createMemoryDriver()) {
  const { core: first } = makeCore({ storage: base });
  await first.spaces.create(owner, { space_id: SPACE });
  const covered = await writeNotes(first, 60, 0);
  const [forgotten] = covered.splice(7, 1);
  await first.forget.forget(owner, { space_id: SPACE, refs: [forgotten!], confirm: true, reason: 'test' });
  await first.recall.rebuildIndex(SPACE); // writes a snapshot covering the live notes
  await first.idle();
  return { base, first, covered };
}

/** A new process after a snapshot, notes written and consolidated since, then a forget by another process. */
async function readsOnlyWhatItReturns(store: StorageDriver) {
  const { base, first, covered } = await storeWithSnapshot(store);

  const files = await liveFiles(base);
  assert.ok(files.length > 0, 'a .live file beside the snapshot');
  const { filenames } = decodeLiveTexts((await base.get(files.sort().at(-1)!))!.body, SPACE);
  assert.deepEqual(new Set(filenames), new Set(covered), 'it holds every live note, not the forgotten one');
  // After the snapshot: new notes, and notes consolidated (some it covered, some newer).
  const later = await writeNotes(first, 12, 60);
  await consolidate(base, '20260220T175000-00cccccc', [...covered.slice(0, 5), ...later.slice(0, 2)]);

  const meter = recording(base);
  const { core } = makeCore({ storage: meter.driver });
  const firstAnswer = await core.notes.search(owner, { space_id: SPACE, query: 'zebracorn', limit: 1 });
  assert.equal(firstAnswer.notes.length, 1);
  assert.equal(firstAnswer.has_more, true);
  const coveredRead = meter.read.filter((filename) => covered.includes(filename));
  assert.ok(coveredRead.length <= 2, `of the notes covered, only the one returned and the one proving has_more are read: ${coveredRead}`);
  assert.ok(meter.read.length - coveredRead.length <= later.length - 2, `and the notes newer than the snapshot: ${meter.read.length}`);
  assert.equal(core.recall.memory().length, 1, "the texts are held by the space's index, counted in the memory budget");
  await assertSameAsScan(core, base);

  // A note forgotten by another process after this one loaded the texts is left out, and no texts file holds it.
  const gone = firstAnswer.notes[0]!.filename;
  await first.forget.forget(owner, { space_id: SPACE, refs: [gone], confirm: true, reason: 'test' });
  const after = await core.notes.search(owner, { space_id: SPACE, query: 'zebracorn', limit: 1000 });
  assert.ok(!after.notes.some((note) => note.filename === gone));
  await first.idle();
  for (const key of await liveFiles(base)) {
    const held = decodeLiveTexts((await base.get(key))!.body, SPACE).filenames;
    assert.ok(!held.includes(gone), `${key} does not hold the forgotten note`);
  }
  await assertSameAsScan(core, base);
}

const liveFiles = async (storage: StorageDriver) => (await listKeys(storage, spaceKeys(SPACE).index)).filter((key) => key.endsWith('.live'));

describe("live_search answers from the live notes' texts beside the index snapshot", () => {
  it('a new process reads no body the texts cover but those it returns, and answers as the old scan did', () => readsOnlyWhatItReturns(createMemoryDriver()));

  it('without texts (a snapshot from before them) it reads the bodies, and the next snapshot carries them', async () => {
    const { base, covered } = await storeWithSnapshot();
    for (const key of await liveFiles(base)) await base.delete(key);

    const meter = recording(base);
    const { core } = makeCore({ storage: meter.driver });
    await assertSameAsScan(core, base);
    assert.equal(new Set(meter.read.filter((filename) => covered.includes(filename))).size, covered.length, 'read every body');
    // The texts read count in the memory estimate (LIVE_MEM_INDEX_MEMORY_MB).
    const characters = covered.length * 20;
    const [held] = core.recall.memory();
    assert.ok(held!.bytes >= characters * 2, `estimated ${held!.bytes} bytes for at least ${characters} characters`);
    await core.recall.search(owner, { space_id: SPACE, query: 'zebracorn' }); // loads the index from the older snapshot
    await core.recall.rebuildIndex(SPACE);

    const again = recording(base);
    const { core: third } = makeCore({ storage: again.driver });
    await third.notes.search(owner, { space_id: SPACE, query: 'zzz-nothing', limit: 20 });
    assert.deepEqual(again.read, [], 'the new snapshot carries the texts read: a search matching nothing reads no body');
    await assertSameAsScan(third, base);
  });

  it('a process that only ran live_search, on a space never indexed, leaves the texts it read for the next one', async () => {
    const base = createMemoryDriver();
    const { core: writer } = makeCore({ storage: base });
    await writer.spaces.create(owner, { space_id: SPACE });
    await writeNotes(writer, 130, 0);
    const { core: first } = makeCore({ storage: base });
    await first.notes.search(owner, { space_id: SPACE, query: 'zzz-nothing' });
    assert.deepEqual(await liveFiles(base), [], 'written when the process is done, not at each search');
    await first.idle(); // what a CLI command and the server do before exiting
    assert.equal((await liveFiles(base)).length, 1);
    assert.deepEqual(
      (await listKeys(base, spaceKeys(SPACE).index)).filter((key) => key.endsWith('.snapshot')),
      [],
      'and no index was built for it',
    );

    const meter = recording(base);
    const { core: second } = makeCore({ storage: meter.driver });
    const answer = await second.notes.search(owner, { space_id: SPACE, query: 'zebracorn', limit: 3 });
    assert.equal(answer.notes.length, 3);
    assert.equal(meter.read.length, 4, 'the three returned and the one proving has_more');
    await assertSameAsScan(second, base);
  });

  it('a damaged texts file is deleted and the bodies read; an altered one never puts a wrong note in an answer', async () => {
    const { base, first, covered } = await storeWithSnapshot();
    const [key] = (await liveFiles(base)).sort().reverse();
    // Altered: every note claims the texts it has, and the words of every query that matches nothing.
    const views = (await first.notes.read(owner, { space_id: SPACE, limit: 1000 })).notes;
    const lies = encodeLiveTexts(
      SPACE,
      views.map((view) => [view.filename, searchableTexts(view).map((text) => `${text} zebracorn zzz-nothing`)]),
    );
    assert.equal(views.length, covered.length);
    await base.delete(key!);
    await base.put(key!, lies);
    const { core } = makeCore({ storage: base });
    await assertSameAsScan(core, base);

    const bytes = Buffer.from((await base.get(key!))!.body);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 0xff;
    await base.delete(key!);
    await base.put(key!, bytes);
    const { core: other } = makeCore({ storage: base });
    await assertSameAsScan(other, base);
    assert.ok(!(await liveFiles(base)).includes(key!), 'the damaged file was deleted');
  });
});

describe("on fs, live/'s listing beside the texts", () => {
  /** A store where a first process ran live_search on 150 notes of a settled live/ and left its texts. */
  async function settledStore(dir: string) {
    const fs = createFsDriver(dir);
    const { core: writer } = makeCore({ storage: fs });
    await writer.spaces.create(owner, { space_id: SPACE });
    await writeNotes(writer, 150, 0);
    // The folder's mtime vouches for its listing once it is a few seconds old: made so at once.
    await settle(dir, 60);
    const { core: first } = makeCore({ storage: fs });
    await first.notes.search(owner, { space_id: SPACE, query: 'zzz-nothing', limit: 5 }); // reads every note
    await first.idle();
    return fs;
  }
  const settle = async (dir: string, minutesAgo: number) => {
    const then = new Date(Date.now() - minutesAgo * 60_000);
    await utimes(path.join(dir, SPACE, 'live'), then, then);
  };
  /** Counts the listings of live/ and the bodies read. */
  const counted = (driver: StorageDriver) => {
    const counts = { liveListings: 0 };
    const wrapped: StorageDriver = {
      ...driver,
      list: (prefix, options) => {
        if (prefix === live) counts.liveListings++;
        return driver.list(prefix, options);
      },
    };
    return { driver: wrapped, counts };
  };

  it('a new process takes the listing from the texts file while live/ is at its version, and lists again once it moved', async () => {
    const tmp = await tempDir();
    try {
      const fs = await settledStore(tmp.dir);
      const files = await liveFiles(fs);
      assert.equal(files.length, 1);
      const file = decodeLiveTexts((await fs.get(files[0]!))!.body, SPACE);
      assert.equal(file.listingVersion, await fs.version!(live), 'written with the version live/ was listed at');
      assert.equal(file.filenames.length, 150);

      const meter = counted(fs);
      const { core } = makeCore({ storage: meter.driver });
      await assertSameAsScan(core, fs);
      assert.equal(meter.counts.liveListings, 0, 'no listing of live/: the file had it');

      // Another process writes a note: live/ moves on (unsettled, then settled at another time).
      const { core: other } = makeCore({ storage: fs });
      const added = await other.notes.write(owner, { space_id: SPACE, category: 'observation', content: 'a quokkasaur seen later' });
      // A word no other note holds: notes of the same second sort by their ids, not by when they were written.
      const found = await core.notes.search(owner, { space_id: SPACE, query: 'quokkasaur', limit: 1 });
      assert.equal(found.notes[0]?.filename, added.filename, 'the process that took the listing sees the new note');
      await settle(tmp.dir, 30);
      const again = counted(fs);
      const { core: next } = makeCore({ storage: again.driver });
      const fresh = await next.notes.search(owner, { space_id: SPACE, query: 'quokkasaur', limit: 1 });
      assert.equal(fresh.notes[0]?.filename, added.filename, 'a new process sees it too');
      assert.equal(again.counts.liveListings, 1, 'the folder is at another version: listed');
      await assertSameAsScan(next, fs);
    } finally {
      await tmp.remove();
    }
  });

  it('no version is written where folders have none, nor for a listing read while live/ was changing', async () => {
    const memory = createMemoryDriver();
    const { core } = makeCore({ storage: memory });
    await core.spaces.create(owner, { space_id: SPACE });
    await writeNotes(core, 120, 0);
    const { core: reader } = makeCore({ storage: memory });
    await reader.notes.search(owner, { space_id: SPACE, query: 'zzz-nothing', limit: 5 });
    await reader.idle();
    const [key] = await liveFiles(memory);
    assert.equal(decodeLiveTexts((await memory.get(key!))!.body, SPACE).listingVersion, undefined);

    const tmp = await tempDir();
    try {
      const fs = createFsDriver(tmp.dir);
      const { core: writer } = makeCore({ storage: fs });
      await writer.spaces.create(owner, { space_id: SPACE });
      await writeNotes(writer, 120, 0);
      // live/ changing: a stamp in the future vouches for nothing, however long the search below takes.
      const folder = path.join(tmp.dir, ...live.split('/').filter(Boolean));
      await utimes(folder, new Date(), new Date(Date.now() + 60_000));
      const { core: first } = makeCore({ storage: fs });
      await first.notes.search(owner, { space_id: SPACE, query: 'zzz-nothing', limit: 5 });
      await first.idle();
      const [written] = await liveFiles(fs);
      assert.equal(decodeLiveTexts((await fs.get(written!))!.body, SPACE).listingVersion, undefined);
    } finally {
      await tmp.remove();
    }
  });
});

describe('live notes’ texts, packed as a file', () => {
  const ALPHABET = Array.from('abé🎉');
  const filename = (i: number) => `20260220T1800${String(i % 60).padStart(2, '0')}_agent_observation_${i.toString(36).padStart(4, '0')}.md`;

  it('find exactly the notes a text of which holds the needle, never a match across two texts', () => {
    // A small alphabet makes matches across text and note boundaries frequent.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const word = (length: number) => Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join('');
    const notes = Array.from({ length: 300 }, (_, i): [string, string[]] => [
      filename(i),
      Array.from({ length: 1 + Math.floor(random() * 3) }, () => word(Math.floor(random() * 6))),
    ]);
    const texts = createLiveTexts();
    texts.load(decodeLiveTexts(encodeLiveTexts(SPACE, notes), SPACE));
    for (let q = 0; q < 300; q++) {
      const needle = word(1 + Math.floor(random() * 4));
      const known = texts.matcher(needle);
      for (const [name, entry] of notes) assert.equal(known(name), matchesNeedle(entry, needle) ? 'match' : 'no-match', `${needle} in ${entry}`);
    }
    assert.equal(texts.matcher('a')('20260220T180000_other_observation_zz.md'), 'unknown');
  });

  it('notes added, deleted and retained are seen so, and a file written again holds what is live', () => {
    const texts = createLiveTexts();
    texts.load(
      decodeLiveTexts(
        encodeLiveTexts(SPACE, [
          [filename(1), ['one']],
          [filename(2), ['two', 'tag']],
        ]),
        SPACE,
      ),
    );
    texts.set(filename(3), ['three']);
    texts.delete(filename(1));
    assert.equal(texts.matcher('one')(filename(1)), 'unknown');
    assert.equal(texts.matcher('tag')(filename(2)), 'match');
    assert.equal(texts.matcher('three')(filename(3)), 'match');
    texts.retain(new Set([filename(3)]));
    assert.equal(texts.matcher('two')(filename(2)), 'unknown');
    const again = decodeLiveTexts(encodeLiveTexts(SPACE, texts.of([filename(1), filename(2), filename(3)])), SPACE);
    assert.deepEqual(again.filenames, [filename(3)]);
  });

  it('carry the listing version they were given, and refuse one that is not a version', () => {
    assert.equal(decodeLiveTexts(encodeLiveTexts(SPACE, [[filename(1), ['one']]], 'v1-abc'), SPACE).listingVersion, 'v1-abc');
    assert.equal(decodeLiveTexts(encodeLiveTexts(SPACE, [[filename(1), ['one']]]), SPACE).listingVersion, undefined);
    assert.throws(() => decodeLiveTexts(encodeLiveTexts(SPACE, [[filename(1), ['one']]], ''), SPACE), /listing version that is not one/);
  });

  it('reject a file of another space, altered or cut short', () => {
    const file = encodeLiveTexts(SPACE, [[filename(1), ['one']]]);
    assert.throws(() => decodeLiveTexts(file, 'other'), /belong to space 'tricky'/);
    for (const damaged of [file.subarray(0, file.length - 1), Buffer.concat([file, Buffer.from('x')])])
      assert.throws(() => decodeLiveTexts(damaged, SPACE), /checksum mismatch/);
  });
});

describe('live_search on radosgw', () => {
  const s3 = requireS3OrSkip('live_search texts on radosgw');
  if (!s3) return;
  it('reads no body the texts cover but those it returns, as on any driver', async () => {
    const harness = await makeS3Harness();
    try {
      await readsOnlyWhatItReturns(harness.driver);
    } finally {
      await harness.cleanup();
    }
  });
});
