import { BoundedCache } from '../../shared/bounded-cache.js';
import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import { isObjectTooLarge } from '../../storage/object-size.js';
import type { StoredObject } from '../../storage/types.js';
import { decodeHistoryNotes, decodeHistoryPreimages, type HistoryPreimage } from '../commit/history.js';
import { type HistoryRecord, isForgetId, parseHistoryRecord } from '../commit/history-record.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { compareNewestFirst, parseNoteName, sortOldestFirst, type NoteName } from '../note-name.js';
import { LARGEST_NOTE_BYTES } from './note-file.js';
import { toNoteView, type NoteView } from './note-view.js';

/**
 * Level 0 of recall: every note ever written to a space, live or consolidated, read through caches
 * that are always right because what they hold never changes: a note's body is immutable once
 * written (create-only), and a consolidation's `notes.json` is complete and frozen once its
 * `record.json` exists. Only listings are re-read, so catching up costs what is new.
 *
 * The one exception is a person's forget (core/forget): it rewrites the notes.json and record.json of
 * the consolidations that held the notes (and the records after them, without their copy of the
 * synthesis), and deletes them from live/. Its own history entry (kind
 * `forget`, written first) names them: `sync` notices new entries, and from then on this process
 * drops the named notes from every answer (tombstones: a note name never comes back) and forgets
 * what it had cached of them and of those consolidations.
 */
export interface Level0Note extends NoteName {
  source: 'live' | 'history';
  /** For history notes: the consolidation that moved it out of live/. */
  consolidation_id?: string;
}

export interface Level0Text extends Level0Note, NoteView {}

/**
 * The corpus's caches share a quarter of the index memory budget (LIVE_MEM_INDEX_MEMORY_MB: the
 * recall service counts them in it, beside the indexes), each its least recently used entries dropped
 * past its share, across spaces: history notes' bodies (a consolidation's notes.json decoded) an
 * eighth of the budget, live notes' bodies a sixteenth, history records a sixteenth, compactions'
 * pre-images (bank text: small) a thirty-second. Sizes are estimated in bytes: a decoded notes.json
 * twice its bytes (the bodies, and the objects and texts parsed from them), a note's text a byte a
 * character plus its description, a record twice its JSON (its arrays and objects), pre-images their
 * bytes.
 */
const CACHE_SHARES = { bundles: 1 / 8, live: 1 / 16, records: 1 / 16, preimages: 1 / 32 } as const;
/** Each cache's least, whatever the budget: a search's own hits stay cached between two searches. */
const MIN_CACHE_BYTES = 1024 * 1024;
const ENTRY_BYTES = 200;
const NOTE_VIEW_BYTES = 300;

/** Oldest first, the order of level 0. */
export const compareOldestFirst = (a: NoteName, b: NoteName): number => compareNewestFirst(b, a);

/**
 * A live note's file, read by every reader of live/ (this corpus, a consolidation's window); null when
 * it is gone, or larger than any note live-mem writes (LARGEST_NOTE_BYTES: a planted file, read whole,
 * would take that much memory, or fail every read of the space): left out with a warning, it hides
 * only itself (`live-mem doctor` reports it).
 */
export async function readLiveNote(context: CoreContext, spaceId: string, filename: string): Promise<StoredObject | null> {
  try {
    return await context.storage.get(spaceKeys(spaceId).note(filename), { maxBytes: LARGEST_NOTE_BYTES });
  } catch (error) {
    if (!isObjectTooLarge(error)) throw error;
    context.logger.warn(`${(error as Error).message}: reads, searches and consolidations of '${spaceId}' leave it out (\`live-mem doctor\` says more)`);
    return null;
  }
}

export function createCorpus(context: CoreContext) {
  const { storage } = context;
  const share = (part: number) => Math.max(MIN_CACHE_BYTES, Math.floor(context.indexMemoryBytes * part));
  const records = new BoundedCache<HistoryRecord>(share(CACHE_SHARES.records)); // `${space}/${cid}` → record (immutable)
  const bundles = new BoundedCache<HistoryBundle>(share(CACHE_SHARES.bundles));
  const liveNotes = new BoundedCache<NoteView>(share(CACHE_SHARES.live));
  const preimages = new BoundedCache<HistoryPreimage[]>(share(CACHE_SHARES.preimages));
  const listings = new Map<string, { version: string; value: unknown }>();
  /** Per space: note names forgotten (tombstones), forget entries known, and history ids whose record was looked at. */
  const forgets = new Map<string, { names: Set<string>; entries: Set<string>; checked: Set<string> }>();
  const forgetsOf = (spaceId: string) => {
    let known = forgets.get(spaceId);
    if (!known) {
      known = { names: new Set(), entries: new Set(), checked: new Set() };
      forgets.set(spaceId, known);
    }
    return known;
  };
  const isForgotten = (spaceId: string, filename: string): boolean => forgets.get(spaceId)?.names.has(filename) ?? false;

  /**
   * A folder's listing, re-read only when the driver's folder version says it changed (or cannot
   * say). The version is taken before listing, so a change during the listing shows next time.
   */
  const cachedListing = async <T>(folder: string, list: () => Promise<T>): Promise<T> => {
    const version = (await storage.version?.(folder)) ?? null;
    const cached = listings.get(folder);
    if (version !== null && cached?.version === version) return cached.value as T;
    const value = await list();
    if (version === null) listings.delete(folder);
    else listings.set(folder, { version, value });
    return value;
  };

  /** The version `value` was listed at, while it is still the one cached for `folder` (none: re-read each time). */
  const listingVersion = (folder: string, value: unknown): string | undefined => {
    const cached = listings.get(folder);
    return cached && cached.value === value ? cached.version : undefined;
  };

  /**
   * A listing another process read at `version` (a texts file says so), taken as this process's own
   * when it has none: cachedListing then uses it for as long as the folder is still at that version.
   */
  const primeListing = (folder: string, version: string, value: unknown): void => {
    if (!listings.has(folder)) listings.set(folder, { version, value });
  };

  /**
   * Per space, live/'s last listing as read: its keys (in key order), their names alike, and those
   * names oldest first. While live/ changes its version vouches for nothing (fs: for a couple of
   * seconds after each note), so each read lists it again: the same keys give back the same names
   * (the same array: readers keyed on it skip their work), new keys alone are parsed.
   */
  const liveListings = new Map<string, { keys: string[]; byKey: Array<NoteName | null>; names: NoteName[] }>();
  const readLiveNames = async (spaceId: string): Promise<NoteName[]> => {
    const live = spaceKeys(spaceId).live;
    const keys = await listKeys(storage, live);
    const last = liveListings.get(spaceId);
    if (last && sameStrings(last.keys, keys)) return last.names;
    const byKey = new Array<NoteName | null>(keys.length);
    for (let i = 0, j = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (last) {
        while (j < last.keys.length && (last.keys[j] as string) < key) j++;
        if (last.keys[j] === key) {
          byKey[i] = last.byKey[j] as NoteName | null;
          continue;
        }
      }
      byKey[i] = parseNoteName(key.slice(live.length));
    }
    const names = sortOldestFirst(byKey.filter((name): name is NoteName => name !== null));
    liveListings.set(spaceId, { keys, byKey, names });
    return names;
  };

  const windows = new Map<string, { version: string; bounds: string; value: unknown }>();
  /**
   * A part of a folder's listing (`bounds` says which: a newest-first window, newest.ts), kept in
   * `slot` and re-read only when the folder's version or the bounds changed: one slot per window,
   * so a long-lived process keeps a few per space.
   */
  const windowListing = async <T>(folder: string, slot: string, bounds: string, list: () => Promise<T>): Promise<T> => {
    const version = (await storage.version?.(folder)) ?? null;
    const key = `${folder}\0${slot}`;
    const cached = windows.get(key);
    if (version !== null && cached?.version === version && cached.bounds === bounds) return cached.value as T;
    const value = await list();
    if (version === null) windows.delete(key);
    else windows.set(key, { version, bounds, value });
    return value;
  };

  /**
   * `cache: false` for a reader that goes through every record once (the search index's build): a
   * million notes' names would stay. `fresh` reads the stored record whatever is cached: what a
   * record says but the caches never use (its copy of the synthesis, which a correction taking a
   * secret out of the synthesis removes), for an answer that shows it (history_read).
   */
  const readRecord = async (spaceId: string, cid: string, options: { cache?: boolean; fresh?: boolean } = {}): Promise<HistoryRecord | null> => {
    const cacheKey = `${spaceId}/${cid}`;
    const cached = options.fresh ? undefined : records.get(cacheKey);
    if (cached) return cached;
    const object = await storage.get(spaceKeys(spaceId).historyRecord(cid));
    if (!object) return null; // a consolidation still being written (or killed before its record): its notes are still live
    const parsed = parseHistoryRecord(object.body, spaceId, cid);
    const record = parsed.kind === 'consolidation' ? { ...parsed, notes: parsed.notes.filter((name) => !isForgotten(spaceId, name)) } : parsed;
    if (options.cache !== false) records.set(cacheKey, record, object.body.length * 2 + ENTRY_BYTES);
    return record;
  };

  /**
   * Learns the forgets committed since the last call (new history entries of kind `forget`): their
   * note names become tombstones, and what was cached of them, and of the consolidations they were
   * taken from, is dropped (read again, rewritten). A listing (skipped when the folder did not
   * change) and each new record once.
   */
  const sync = async (spaceId: string, listed?: readonly string[]): Promise<void> => {
    const known = forgetsOf(spaceId);
    const ids = listed ?? (await corpus.historyIds(spaceId));
    // Only a forget's entry is read: its id says what it is, so a new process reads no other record for this.
    const fresh = ids.filter((cid) => !known.checked.has(cid) && isForgetId(cid));
    if (fresh.length === 0) return;
    const found = await mapLimit(fresh, storage.parallelism, (cid) =>
      readRecord(spaceId, cid).catch((error: unknown) => skipDamaged('the history', error, null)),
    );
    for (const [i, record] of found.entries()) {
      if (!record) continue; // being written: looked at again next time
      known.checked.add(fresh[i] as string);
      if (record.kind !== 'forget' || !record.forget || known.entries.has(record.id)) continue;
      known.entries.add(record.id);
      for (const name of record.forget.filenames) {
        known.names.add(name);
        liveNotes.delete(`${spaceId}/${name}`);
      }
      for (const cid of record.forget.consolidations) {
        records.delete(`${spaceId}/${cid}`);
        bundles.delete(`${spaceId}/${cid}`);
      }
      // And every record from the first of them on: the forget takes out their copy of the synthesis.
      const first = [...record.forget.consolidations].sort()[0];
      if (first !== undefined) records.deleteWhere((key) => key.startsWith(`${spaceId}/`) && key.slice(spaceId.length + 1) >= first);
    }
  };

  /** A consolidation's notes.json, decoded once; each note's front-matter parsed when first asked. */
  const bundleOf = async (spaceId: string, cid: string, cache = true): Promise<HistoryBundle> => {
    const cacheKey = `${spaceId}/${cid}`;
    const cached = bundles.get(cacheKey);
    if (cached) return cached;
    const key = spaceKeys(spaceId).historyNotes(cid);
    const object = await storage.get(key);
    const bodies = new Map<string, { name: NoteName; body: Buffer }>();
    for (const { filename, body } of object ? decodeHistoryNotes(object.body, key) : []) {
      const name = parseNoteName(filename);
      if (name && !isForgotten(spaceId, filename)) bodies.set(filename, { name, body });
    }
    const views = new Map<string, Level0Text>();
    const bundle: HistoryBundle = {
      order: [...bodies.values()]
        .map((entry) => entry.name)
        .sort(compareOldestFirst)
        .map((name) => name.filename),
      view(filename) {
        let view = views.get(filename);
        const entry = bodies.get(filename);
        if (!view && entry) {
          view = { ...entry.name, ...toNoteView(entry.name, entry.body), source: 'history', consolidation_id: cid };
          views.set(filename, view);
        }
        return view ?? null;
      },
    };
    // A bundle is only cached once whole: a missing notes.json (a consolidation being written) is asked again.
    if (object && cache) bundles.set(cacheKey, bundle, object.body.length * 2 + ENTRY_BYTES);
    return bundle;
  };

  /** A damaged history file is left out with a warning, so it hides only itself (`live-mem doctor` reports it). */
  const skipDamaged = <T>(what: string, error: unknown, fallback: T): T => {
    if (!isLiveMemError(error, 'storage_error') || error.data.damaged !== true) throw error;
    context.logger.warn(`${error.message}: ${what} leaves it out (\`live-mem doctor\` says more)`);
    return fallback;
  };

  const corpus = {
    /** Complete consolidations of a space, oldest first (ids start with their commit stamp); a damaged record is skipped. */
    async history(spaceId: string): Promise<HistoryRecord[]> {
      const ids = await corpus.historyIds(spaceId);
      await sync(spaceId, ids);
      const found = await mapLimit(ids, storage.parallelism, (cid) =>
        readRecord(spaceId, cid).catch((error: unknown) => skipDamaged('the history', error, null)),
      );
      return found.filter((record): record is HistoryRecord => record !== null);
    },

    skipDamaged,

    sync,

    /** The note names this process knows were forgotten (after `sync`), and how many forgets that is. */
    forgotten(spaceId: string): { names: ReadonlySet<string>; forgets: number } {
      const known = forgetsOf(spaceId);
      return { names: known.names, forgets: known.entries.size };
    },

    /** One consolidation's record, or null. */
    record: readRecord,

    /**
     * The notes one consolidation moved into history, oldest first, with their text. `cache: false`
     * for a reader that goes through every consolidation once (the search index's build): the
     * bundles would otherwise stay in memory beside the index, up to their share (CACHE_SHARES).
     */
    async historyNotes(spaceId: string, cid: string, options: { cache?: boolean } = {}): Promise<Level0Text[]> {
      const bundle = await bundleOf(spaceId, cid, options.cache !== false);
      return bundle.order.map((filename) => bundle.view(filename) as Level0Text);
    },

    /**
     * The sections a compaction rewrote, as they were, in the order of its preimages.json. Frozen
     * once its record exists (written after it), so cached; a missing or undecodable file is
     * `storage_error` with data `damaged`, for callers to skip (`skipDamaged`).
     */
    async historyPreimages(spaceId: string, cid: string): Promise<HistoryPreimage[]> {
      const cacheKey = `${spaceId}/${cid}`;
      const cached = preimages.get(cacheKey);
      if (cached) return cached;
      const key = spaceKeys(spaceId).historyPreimages(cid);
      const object = await storage.get(key);
      if (!object) throw new LiveMemError('storage_error', `${key} is missing`, { space_id: spaceId, consolidation_id: cid, damaged: true });
      const sections = decodeHistoryPreimages(object.body, key);
      preimages.set(cacheKey, sections, object.body.length + ENTRY_BYTES);
      return sections;
    },

    /** One note of a consolidation (only that note's front-matter is parsed), or null. */
    async historyNote(spaceId: string, cid: string, filename: string): Promise<Level0Text | null> {
      return (await bundleOf(spaceId, cid)).view(filename);
    },

    /** Consolidation ids of a space, complete or not, ascending (a listing; no record is read). */
    historyIds(spaceId: string): Promise<string[]> {
      const root = spaceKeys(spaceId).history;
      return cachedListing(root, async () => (await listPrefixes(storage, root)).map((prefix) => prefix.slice(root.length, -1)).sort());
    },

    /** Live note names, oldest first. */
    async liveNames(spaceId: string): Promise<NoteName[]> {
      await sync(spaceId);
      const names = await cachedListing(spaceKeys(spaceId).live, () => readLiveNames(spaceId));
      // A forgotten note still in live/ (a forget cut short, finished by the next lease holder) is already gone for readers.
      const known = forgets.get(spaceId);
      if (!known || known.names.size === 0 || !names.some((name) => known.names.has(name.filename))) return names;
      return names.filter((name) => !known.names.has(name.filename));
    },

    /** A folder listing through the version cache (for other folders of a space: bank, summaries). */
    cachedListing,
    listingVersion,
    primeListing,

    windowListing,
    /**
     * Forgets what is cached of a space — listings, history records, note texts (its search index
     * left memory): read again when next asked. Its tombstones stay: they keep a forgotten note out.
     */
    release(spaceId: string): void {
      const root = spaceKeys(spaceId).root;
      for (const folder of [...listings.keys()]) if (folder.startsWith(root)) listings.delete(folder);
      for (const key of [...windows.keys()]) if (key.startsWith(root)) windows.delete(key);
      liveListings.delete(spaceId);
      for (const cache of [records, liveNotes, bundles, preimages]) cache.deletePrefix(root);
    },

    /** What the caches hold, estimated in bytes (counted in the index memory budget with the indexes): all, or one space's. */
    bytes(spaceId?: string): number {
      const caches = [records, liveNotes, bundles, preimages];
      if (spaceId === undefined) return caches.reduce((sum, cache) => sum + cache.weight, 0);
      const root = spaceKeys(spaceId).root;
      return caches.reduce((sum, cache) => sum + cache.weightOf(root), 0);
    },

    /**
     * A note this process has just created, as a read of the body it stored would find it (the fields
     * `formatNoteFile` wrote, not parsed back): notes never change, so the next catch-up of the space's
     * index (or a live_read) reads no file.
     */
    wroteLive(spaceId: string, view: NoteView): void {
      liveNotes.set(`${spaceId}/${view.filename}`, view, view.content.length + NOTE_VIEW_BYTES);
    },

    /** One live note with its text; null once it left live/ (consolidated), never existed, or is too large to be one (readLiveNote). */
    async liveNote(spaceId: string, name: NoteName): Promise<NoteView | null> {
      const cacheKey = `${spaceId}/${name.filename}`;
      if (isForgotten(spaceId, name.filename)) return null;
      const cached = liveNotes.get(cacheKey);
      if (cached) return cached;
      const object = await readLiveNote(context, spaceId, name.filename);
      if (!object) return null;
      const view = toNoteView(name, object.body);
      liveNotes.set(cacheKey, view, view.content.length + NOTE_VIEW_BYTES);
      return view;
    },

    /**
     * Every note of the space, oldest first, without its text. A note found both in live/ and in a
     * complete consolidation (a consolidation cut between its record and the removal from live/)
     * is listed once, as history.
     */
    async level0(spaceId: string): Promise<Level0Note[]> {
      const [history, live] = await Promise.all([corpus.history(spaceId), corpus.liveNames(spaceId)]);
      const notes: Level0Note[] = [];
      const seen = new Set<string>();
      for (const record of history) {
        for (const filename of record.notes) {
          const name = parseNoteName(filename);
          if (!name || seen.has(filename)) continue;
          seen.add(filename);
          notes.push({ ...name, source: 'history', consolidation_id: record.id });
        }
      }
      for (const name of live) if (!seen.has(name.filename)) notes.push({ ...name, source: 'live' });
      return notes.sort(compareOldestFirst);
    },

    /**
     * The text of level-0 notes, in the order given; a live note consolidated since it was listed
     * is looked up in history, and one found nowhere is left out.
     */
    async read(spaceId: string, notes: readonly Level0Note[]): Promise<Level0Text[]> {
      let movedOn: Promise<Map<string, string>> | undefined; // filename → consolidation, read once if needed
      const texts = await mapLimit(notes, storage.parallelism, async (note): Promise<Level0Text | null> => {
        if (note.consolidation_id) {
          return corpus.historyNote(spaceId, note.consolidation_id, note.filename).catch((error: unknown) => skipDamaged('recall', error, null));
        }
        const view = await corpus.liveNote(spaceId, note);
        if (view) return { ...note, ...view };
        // Consolidated since it was listed: find which consolidation took it.
        movedOn ??= corpus
          .history(spaceId)
          .then((records) => new Map(records.flatMap((record) => record.notes.map((filename) => [filename, record.id] as const))));
        const cid = (await movedOn).get(note.filename);
        return cid ? corpus.historyNote(spaceId, cid, note.filename).catch((error: unknown) => skipDamaged('recall', error, null)) : null;
      });
      return texts.filter((text): text is Level0Text => text !== null);
    },
  };
  return corpus;
}

export type Corpus = ReturnType<typeof createCorpus>;

interface HistoryBundle {
  /** Filenames, oldest first. */
  order: string[];
  view(filename: string): Level0Text | null;
}

/** Two string lists equal, entry for entry. */
function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
