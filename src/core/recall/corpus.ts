import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import type { RevisionInfo } from '../consolidation/commit.js';
import { DISPOSITION_STATUSES, type Disposition, type ProvenanceEntry } from '../consolidation/provenance.js';
import { decodeHistoryNotes, decodeHistoryPreimages, type HistoryPreimage } from '../consolidation/history.js';
import type { CoreContext } from '../context.js';
import { readRetention, type RetentionEntry, type SectionRetention } from '../retention/record.js';
import { spaceKeys } from '../layout.js';
import { compareNewestFirst, parseNoteName, sortOldestFirst, toStamp, type NoteName } from '../note/note-name.js';
import { toNoteView, type NoteView } from '../note/note-view.js';

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

/** `history/{id}/record.json`, as consolidation/commit.ts writes it. */
export interface HistoryRecord {
  id: string;
  space_id: string;
  /** What wrote it; records written before compaction existed have none and are consolidations. */
  kind: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  /** Note file names, oldest first ([] for a compaction). */
  notes: string[];
  time_range: { oldest: string | null; newest: string | null };
  bank_files: Array<{ filename: string; kind: string }>;
  metrics: Record<string, unknown>;
  /** A compaction's or a revision's: how many sections (a revision: whole files) its preimages.json keeps. */
  preimages?: number;
  /** A revision's: who, why, what it did (see consolidation/commit.ts RevisionInfo). */
  revision?: RevisionInfo;
  /** A consolidation's: bank section ← notes, and what became of each note (consolidation/provenance.ts); [] before they existed. */
  provenance: ProvenanceEntry[];
  dispositions: Disposition[];
  /** A consolidation's: what of each note the bank holds; a compaction's: what each digest kept (core/retention). [] before the check existed. */
  retention: Array<RetentionEntry | SectionRetention>;
  /** A forget's: who, why, how many notes, their names, the consolidations whose files it rewrote (never their text). */
  forget?: ForgetEntry;
  /** A consolidation's: notes a forget removed from it since (which, when, by whom, why). */
  forgotten?: Array<{ forget_id: string; filenames: string[]; at: string; by: string; reason: string | null }>;
}

export interface ForgetEntry {
  by: string;
  reason: string | null;
  notes_count: number;
  filenames: string[];
  consolidations: string[];
}

/** A forget's history id ends so (core/forget): every process finds forgets from a listing, without reading other records. */
export const FORGET_ID_SUFFIX = '-forget';
export const isForgetId = (cid: string): boolean => cid.endsWith(FORGET_ID_SUFFIX);

/** Only a consolidation moves notes into history; a compaction and a revision keep pre-images instead; a forget keeps nothing. */
export const keepsPreimages = (record: Pick<HistoryRecord, 'kind'>): boolean => record.kind === 'compaction' || record.kind === 'revision';

/** Bodies of history notes kept in memory, in characters, across spaces (least recently used dropped). */
const HISTORY_CACHE_CHARS = 64 * 1024 * 1024;
/** Live note bodies kept in memory per process, in characters. */
const LIVE_CACHE_CHARS = 64 * 1024 * 1024;
/** Pre-images of compactions kept in memory, in characters, across spaces (they are bank text: small). */
const PREIMAGES_CACHE_CHARS = 16 * 1024 * 1024;

/** Oldest first, the order of level 0. */
export const compareOldestFirst = (a: NoteName, b: NoteName): number => compareNewestFirst(b, a);

export function createCorpus(context: CoreContext) {
  const { storage } = context;
  const records = new Map<string, HistoryRecord>(); // `${space}/${cid}` → record (immutable)
  const bundles = new BoundedCache<HistoryBundle>(HISTORY_CACHE_CHARS);
  const liveNotes = new BoundedCache<NoteView>(LIVE_CACHE_CHARS);
  const preimages = new BoundedCache<HistoryPreimage[]>(PREIMAGES_CACHE_CHARS);
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
    if (options.cache !== false) records.set(cacheKey, record);
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
      if (first !== undefined)
        for (const key of [...records.keys()]) if (key.startsWith(`${spaceId}/`) && key.slice(spaceId.length + 1) >= first) records.delete(key);
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
    if (object && cache) bundles.set(cacheKey, bundle, object.body.length * 2 + 200);
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
     * bundles would otherwise stay in memory beside the index, up to HISTORY_CACHE_CHARS.
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
      preimages.set(cacheKey, sections, object.body.length + 200);
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
      for (const key of [...records.keys()]) if (key.startsWith(root)) records.delete(key);
      liveListings.delete(spaceId);
      for (const cache of [liveNotes, bundles, preimages]) cache.deletePrefix(root);
    },

    /**
     * A note this process has just created, with the body it stored: notes never change, so that is
     * what a read would find, and the next catch-up of the space's index (or a live_read) reads no file.
     */
    wroteLive(spaceId: string, name: NoteName, body: string): void {
      const view = toNoteView(name, body);
      liveNotes.set(`${spaceId}/${name.filename}`, view, view.content.length + 200);
    },

    /** One live note with its text; null once it left live/ (consolidated) or never existed. */
    async liveNote(spaceId: string, name: NoteName): Promise<NoteView | null> {
      const cacheKey = `${spaceId}/${name.filename}`;
      if (isForgotten(spaceId, name.filename)) return null;
      const cached = liveNotes.get(cacheKey);
      if (cached) return cached;
      const object = await storage.get(spaceKeys(spaceId).note(name.filename));
      if (!object) return null;
      const view = toNoteView(name, object.body);
      liveNotes.set(cacheKey, view, view.content.length + 200);
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

/**
 * The notes forgotten by the forgets committed since `since` (an ISO time; a forget in that same
 * second counts), or null when there is none: for state written outside the space's lease that may
 * quote notes (a job record saved as its run ends), to take them out itself. A listing of history,
 * then only the forgets' entries (their id says what they are).
 */
export async function forgottenSince(context: CoreContext, spaceId: string, since: string): Promise<Set<string> | null> {
  const root = spaceKeys(spaceId).history;
  const from = toStamp(new Date(since));
  // Ids start with their stamp: the listing starts there, not at the space's first consolidation.
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await context.storage.list(root, { delimiter: '/', ...(cursor === undefined ? { startAfter: `${root}${from}` } : { cursor }) });
    ids.push(...page.prefixes.map((prefix) => prefix.slice(root.length, -1)).filter(isForgetId));
    cursor = page.cursor;
  } while (cursor !== undefined);
  if (ids.length === 0) return null;
  const gone = new Set<string>();
  for (const id of ids) {
    const object = await context.storage.get(spaceKeys(spaceId).historyRecord(id));
    if (!object) continue; // its entry is being written: the forget cleans what it finds after
    try {
      for (const name of parseHistoryRecord(object.body, spaceId, id).forget?.filenames ?? []) gone.add(name);
    } catch {
      // a damaged entry names nothing (doctor reports it); the forget's own clean-up still ran
    }
  }
  return gone;
}

/** A `record.json` as read; `storage_error` (data `damaged`) when it is not a JSON object. */
export function parseHistoryRecord(body: Buffer, spaceId: string, cid: string): HistoryRecord {
  const damaged = (cause?: unknown) =>
    new LiveMemError(
      'storage_error',
      `history record ${cid} of space '${spaceId}' is not valid JSON`,
      { space_id: spaceId, consolidation_id: cid, damaged: true },
      cause === undefined ? {} : { cause },
    );
  let record: HistoryRecord;
  try {
    record = JSON.parse(body.toString('utf8')) as HistoryRecord;
  } catch (cause) {
    throw damaged(cause);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw damaged();
  const { preimages, revision, provenance, dispositions, forget, forgotten, retention, ...rest } = record;
  const kind = rest.kind === 'compaction' || rest.kind === 'revision' || rest.kind === 'forget' ? rest.kind : 'consolidation';
  return {
    ...rest,
    id: cid,
    kind,
    ...(kind !== 'consolidation' && Number.isInteger(preimages) ? { preimages } : {}),
    ...(kind === 'revision' && typeof revision === 'object' && revision !== null ? { revision } : {}),
    ...(kind === 'forget' && isForgetEntry(forget) ? { forget } : {}),
    ...(kind === 'consolidation' && Array.isArray(forgotten) ? { forgotten } : {}),
    notes: Array.isArray(record.notes) ? record.notes.filter((name) => typeof name === 'string') : [],
    bank_files: Array.isArray(record.bank_files) ? record.bank_files : [],
    time_range: typeof record.time_range === 'object' && record.time_range !== null ? record.time_range : { oldest: null, newest: null },
    metrics: typeof record.metrics === 'object' && record.metrics !== null ? record.metrics : {},
    ...citations(provenance, dispositions),
    retention: readRetention(retention),
  };
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** A record's provenance and dispositions, each entry kept only when well formed: a hand-edited record misleads no one. */
function citations(provenance: unknown, dispositions: unknown): Pick<HistoryRecord, 'provenance' | 'dispositions'> {
  const entries = Array.isArray(provenance) ? (provenance as Array<Partial<ProvenanceEntry> | null>) : [];
  const statuses = Array.isArray(dispositions) ? (dispositions as Array<Partial<Disposition> | null>) : [];
  return {
    provenance: entries.filter((e): e is ProvenanceEntry => typeof e?.filename === 'string' && isStrings(e.path) && isStrings(e.notes)),
    dispositions: statuses.filter((d): d is Disposition => typeof d?.note === 'string' && DISPOSITION_STATUSES.includes(d.status as Disposition['status'])),
  };
}

const isForgetEntry = (value: unknown): value is ForgetEntry =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as ForgetEntry).filenames) &&
  (value as ForgetEntry).filenames.every((name) => typeof name === 'string') &&
  Array.isArray((value as ForgetEntry).consolidations) &&
  (value as ForgetEntry).consolidations.every((cid) => typeof cid === 'string');

interface HistoryBundle {
  /** Filenames, oldest first. */
  order: string[];
  view(filename: string): Level0Text | null;
}

/** A map that forgets its least recently used entries past a total weight. */
class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private total = 0;
  constructor(private readonly capacity: number) {}

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, weight: number): void {
    const old = this.entries.get(key);
    if (old) this.total -= old.weight;
    this.entries.delete(key);
    this.entries.set(key, { value, weight });
    this.total += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.capacity || this.entries.size <= 1) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
  }
}

/** Two string lists equal, entry for entry. */
function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
