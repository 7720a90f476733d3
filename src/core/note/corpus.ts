import { BoundedCache } from '../../shared/bounded-cache.js';
import { listPrefixes } from '../../storage/list.js';
import { isObjectTooLarge } from '../../storage/object-size.js';
import type { StoredObject } from '../../storage/types.js';
import type { HistoryPreimage } from '../commit/history.js';
import type { HistoryRecord } from '../commit/history-record.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import type { NoteName } from '../note-name.js';
import type { HistoryBundle } from './history-bundle.js';
import { createHistoryReader } from './history-reader.js';
import { type Level0Note, type Level0Text, listLevel0, readLevel0 } from './level0.js';
import { createListingCache } from './listing-cache.js';
import { createLiveListings } from './live-listing.js';
import { LARGEST_NOTE_BYTES } from './note-file.js';
import { type NoteView, toNoteView } from './note-view.js';

export type { Level0Note, Level0Text } from './level0.js';

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
const NOTE_VIEW_BYTES = 300;

/**
 * Flattens a text built by `+` or a template literal (a note's filename is a rope of seven pieces, its
 * timestamp a slice of a date's ISO text and a `Z`) into one string, in place: V8 reads a number only
 * from a flat string, and once a rope is flat the GC replaces it by its flat copy. A written note's
 * view stays in the live-note cache: each piece of a rope would be one more survivor every scavenge
 * copies (in section 25's steady state, 0.046 ms a note with ropes, 0.040 flattened). The number is
 * compared so that the call is kept.
 */
function flattenText(text: string): boolean {
  return Number.isNaN(Number(text));
}

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
export function createCorpus(context: CoreContext) {
  const { storage } = context;
  const listingCache = createListingCache(storage);
  const { cachedListing, listingVersion, primeListing, windowListing } = listingCache;
  const liveListings = createLiveListings(storage);
  const share = (part: number) => Math.max(MIN_CACHE_BYTES, Math.floor(context.indexMemoryBytes * part));
  const records = new BoundedCache<HistoryRecord>(share(CACHE_SHARES.records)); // `${space}/${cid}` → record (immutable)
  const bundles = new BoundedCache<HistoryBundle>(share(CACHE_SHARES.bundles));
  const liveNotes = new BoundedCache<NoteView>(share(CACHE_SHARES.live));
  const preimages = new BoundedCache<HistoryPreimage[]>(share(CACHE_SHARES.preimages));
  const historyIds = (spaceId: string): Promise<string[]> => {
    const root = spaceKeys(spaceId).history;
    return cachedListing(root, async () => (await listPrefixes(storage, root)).map((prefix) => prefix.slice(root.length, -1)).sort());
  };
  const { reader, isForgotten, tombstones } = createHistoryReader(context, { records, bundles, preimages, liveNotes }, historyIds);

  const corpus = {
    ...reader,

    /** Consolidation ids of a space, complete or not, ascending (a listing; no record is read). */
    historyIds,

    /** Live note names, oldest first. */
    async liveNames(spaceId: string): Promise<NoteName[]> {
      await reader.sync(spaceId);
      const names = await cachedListing(spaceKeys(spaceId).live, () => liveListings.names(spaceId));
      // A forgotten note still in live/ (a forget cut short, finished by the next lease holder) is already gone for readers.
      const known = tombstones(spaceId);
      if (!known || known.size === 0 || !names.some((name) => known.has(name.filename))) return names;
      return names.filter((name) => !known.has(name.filename));
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
      listingCache.release(root);
      liveListings.release(spaceId);
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
      flattenText(view.filename);
      flattenText(view.timestamp);
      flattenText(view.content);
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
    level0: (spaceId: string): Promise<Level0Note[]> => listLevel0(corpus, spaceId),

    /**
     * The text of level-0 notes, in the order given; a live note consolidated since it was listed
     * is looked up in history, and one found nowhere is left out.
     */
    read: (spaceId: string, notes: readonly Level0Note[]): Promise<Level0Text[]> => readLevel0(corpus, storage.parallelism, spaceId, notes),
  };
  return corpus;
}

export type Corpus = ReturnType<typeof createCorpus>;
