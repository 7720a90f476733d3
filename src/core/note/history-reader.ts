/**
 * The history side of the corpus: consolidation records, the notes they moved out of live/ (in
 * bundles), compactions' pre-images, and the tombstones of notes a person forgot, all read through
 * the corpus's caches. Its own module because forgets are what make those caches drop entries, and
 * that rule should sit next to every cache it touches.
 */
import type { BoundedCache } from '../../shared/bounded-cache.js';
import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { StorageDriver } from '../../storage/types.js';
import { decodeHistoryPreimages, type HistoryPreimage } from '../commit/history.js';
import { type HistoryRecord, isForgetId, parseHistoryRecord } from '../commit/history-record.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { type HistoryBundle, readHistoryBundle } from './history-bundle.js';
import type { Level0Text } from './level0.js';
import type { NoteView } from './note-view.js';

/** Bytes counted for an entry beside its data (a cache key, a Map slot). */
const ENTRY_BYTES = 200;

/** The corpus caches the history side reads through (and drops from, on a forget). */
export interface HistoryCaches {
  records: BoundedCache<HistoryRecord>;
  bundles: BoundedCache<HistoryBundle>;
  preimages: BoundedCache<HistoryPreimage[]>;
  liveNotes: BoundedCache<NoteView>;
}

/**
 * The history readers of one corpus; `historyIds` lists a space's consolidation ids (through the
 * corpus's listing cache). `isForgotten` and `tombstones` are for the corpus's live side.
 */
export function createHistoryReader(context: CoreContext, caches: HistoryCaches, historyIds: (spaceId: string) => Promise<string[]>) {
  const { storage } = context;
  const { records, bundles, preimages, liveNotes } = caches;
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
    const ids = listed ?? (await historyIds(spaceId));
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
        reading.delete(`${spaceId}/${cid}`);
      }
      // And every record from the first of them on: the forget takes out their copy of the synthesis.
      const first = [...record.forget.consolidations].sort()[0];
      if (first !== undefined) records.deleteWhere((key) => key.startsWith(`${spaceId}/`) && key.slice(spaceId.length + 1) >= first);
    }
  };

  /** Bundles being read, by cache key (shareRead); dropped with the cached bundle when a forget rewrites it. */
  const reading = new Map<string, Promise<{ bundle: HistoryBundle; bytes: number | null }>>();
  /** A consolidation's notes.json, decoded once; each note's front-matter parsed when first asked. */
  const bundleOf = async (spaceId: string, cid: string, cache = true): Promise<HistoryBundle> => {
    const cacheKey = `${spaceId}/${cid}`;
    const cached = bundles.get(cacheKey);
    if (cached) return cached;
    const { bundle, bytes } = await shareRead(reading, cacheKey, () => readHistoryBundle(storage, spaceId, cid, (filename) => isForgotten(spaceId, filename)));
    // A bundle is only cached once whole: a missing notes.json (a consolidation being written) is asked again.
    if (bytes !== null && cache) bundles.set(cacheKey, bundle, bytes * 2 + ENTRY_BYTES);
    return bundle;
  };

  /** A damaged history file is left out with a warning, so it hides only itself (`live-mem doctor` reports it). */
  const skipDamaged = <T>(what: string, error: unknown, fallback: T): T => {
    if (!isLiveMemError(error, 'storage_error') || error.data.damaged !== true) throw error;
    context.logger.warn(`${error.message}: ${what} leaves it out (\`live-mem doctor\` says more)`);
    return fallback;
  };

  const reader = {
    /** Complete consolidations of a space, oldest first (ids start with their commit stamp); a damaged record is skipped. */
    async history(spaceId: string): Promise<HistoryRecord[]> {
      const ids = await historyIds(spaceId);
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
    historyPreimages: (spaceId: string, cid: string): Promise<HistoryPreimage[]> => readPreimages(storage, preimages, spaceId, cid),

    /** One note of a consolidation (only that note's front-matter is parsed), or null. */
    async historyNote(spaceId: string, cid: string, filename: string): Promise<Level0Text | null> {
      return (await bundleOf(spaceId, cid)).view(filename);
    },
  };
  return {
    reader,
    isForgotten,
    /** A space's tombstones, if any forget of it is known (never made here: a read must not add a space). */
    tombstones: (spaceId: string): ReadonlySet<string> | undefined => forgets.get(spaceId)?.names,
  };
}

/**
 * The read of `key` in flight, or `start()`'s, kept in `reads` until it settles: callers that ask
 * meanwhile share it (a search's hits often fall in one consolidation; on S3 each is a 240 KB GET).
 */
function shareRead<T>(reads: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  const pending = reads.get(key);
  if (pending) return pending;
  const started = start().finally(() => {
    if (reads.get(key) === started) reads.delete(key);
  });
  reads.set(key, started);
  return started;
}

/** A compaction's preimages.json, decoded once and cached (it is frozen once its record exists). */
async function readPreimages(storage: StorageDriver, preimages: BoundedCache<HistoryPreimage[]>, spaceId: string, cid: string): Promise<HistoryPreimage[]> {
  const cacheKey = `${spaceId}/${cid}`;
  const cached = preimages.get(cacheKey);
  if (cached) return cached;
  const key = spaceKeys(spaceId).historyPreimages(cid);
  const object = await storage.get(key);
  if (!object) throw new LiveMemError('storage_error', `${key} is missing`, { space_id: spaceId, consolidation_id: cid, damaged: true });
  const sections = decodeHistoryPreimages(object.body, key);
  preimages.set(cacheKey, sections, object.body.length + ENTRY_BYTES);
  return sections;
}
