import { mapLimit } from '../../shared/concurrency.js';
import { listAll, listPrefixes } from '../../storage/list.js';
import type { SearchHit, TextIndex, TextIndexEngine } from '../../search/types.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { isStoredBankFilename } from '../validate.js';
import type { Corpus } from '../note/corpus.js';
import { type HistoryRecord, keepsPreimages } from '../commit/history-record.js';
import {
  bankRef,
  noteDocId,
  noteMeta,
  parsePreimageDocId,
  preimageDocId,
  preimageMeta,
  preimageText,
  summaryDocId,
  summaryText,
  SYNTHESIS_DOC_ID,
  type DocMeta,
  INDEX_OPTIONS,
} from './documents.js';
import { type LiveTextsLookup, noteText, searchableTexts } from '../note/note-text.js';
import { bankSections } from '../markdown/sections.js';
import { createVectorStore, loadVectorStore, type VectorStore } from './vectors.js';
import { encodeSnapshot, type IndexStore, type SnapshotHeader, type SummaryCoverage } from './index-store.js';
import { createLiveTexts, encodeLiveTexts } from './live-texts.js';
import { diffListings, type NoteName, parseNoteName, sortOldestFirst, toStamp } from '../note-name.js';
import { COMMIT_SKEW_MS, stampMs } from '../note/newest.js';
import { MAX_LEVEL, parseRecord } from '../derived/summary-record.js';
import { firstIndex } from '../../shared/bisect.js';
import { type Places, Timeline, TIMELINE_SECTION } from './timeline.js';
import { type Candidate, isDerivedSource } from './ranking.js';

/**
 * A snapshot is written once this many documents changed since the last one this process knows, and
 * when the process exits (`idle`) with at least as many: a new process replays at most about this
 * many documents an earlier one already read (issue 22: it replayed up to 499 every time)…
 */
export const SNAPSHOT_AFTER_CHANGES = 100;
/** …while running, no more often than this (a burst of notes costs one snapshot, and the exit writes the rest)… */
const SNAPSHOT_MIN_INTERVAL_MS = 10_000;
/** …and after a build from scratch or new embeddings, when the index holds at least this many documents. */
const SNAPSHOT_MIN_DOCUMENTS = 50;
/**
 * What the memory estimate (`bytes`) counts per entry besides the engine: a Set or Map entry with its
 * key's string header (bm25.ts's figures), and a note's parsed description (measured: 100,000
 * `noteMeta` results held in a Map took 530 bytes each on Node 20, with their strings).
 */
const ENTRY_BYTES = 40 + 16;
const NOTE_META_BYTES = 530;
const COVERAGE_BYTES = 300;
/**
 * Note descriptions kept parsed (a filter asks one per candidate): at 530 bytes each, a million of
 * them were half a gigabyte beside a 1M-note index; this many are 53 MB, and parsing one again costs
 * about a microsecond.
 */
const NOTE_METAS_KEPT = 100_000;
/** Consolidations probed for one fresh live name before gathering every history filename instead (inHistory). */
const IN_HISTORY_PROBES = 16;
const STAMP = /^\d{8}T\d{6}/;

/** How far a refresh got, for a display: the consolidations and live notes it reads (a first build, a long catch-up). */
export interface IndexProgress {
  space_id: string;
  phase: 'history' | 'live';
  done: number;
  total: number;
}

type OnIndexProgress = (event: IndexProgress) => void;

/** A candidate's kind (space-index `candidate`): a note without an agent (or a document not described), derived text, a note by agents[kind - KIND_AGENT]. */
const KIND_OTHER = 1;
const KIND_DERIVED = 2;
const KIND_AGENT = 3;

/** A note's place in `places` (-1 for anything else, or a note not placed). */
function notePlace(meta: DocMeta | null, places: Places): number {
  return meta && (meta.source === 'live' || meta.source === 'history') ? places.of(meta.id, meta.ref, meta.consolidation_id) : -1;
}

/**
 * One space's search index in this process: documents (see documents.ts) in a text engine, with
 * what they cover. `refresh` brings it up to date with the store by reading only what is new —
 * listings are skipped where the driver's folder version says nothing changed — and every
 * read-only answer goes through it. It never writes to the store except snapshots, in the
 * background, and nothing waits on it to write a note.
 */
export function createSpaceIndex(options: { context: CoreContext; corpus: Corpus; engine: TextIndexEngine; store: IndexStore; spaceId: string }) {
  const { context, corpus, engine, store, spaceId } = options;
  const { storage, logger } = context;
  const keys = spaceKeys(spaceId);

  let index: TextIndex = engine.create(INDEX_OPTIONS);
  /** Level 0 in walking order, for the ranking's neighbours and sittings (timeline.ts): kept with the index. */
  let timeline = new Timeline();
  /** Embeddings of the documents (hybrid search), when a model is configured; filled in the background. */
  let vectors: VectorStore | null = context.embeddings ? createVectorStore() : null;
  /** Bumped at each replacement of a document: a vector computed from an older text is dropped. */
  const generations = new Map<string, number>();
  const live = new Set<string>(); // live filenames indexed as n:
  /** What live_search matches of live notes (live-texts.ts): from the newest `.live` file, then from the notes read. */
  const texts = createLiveTexts();
  let textsLoading: Promise<void> | null = null;
  /** Texts read by a process that never loaded the index (it only ran live_search): no snapshot will carry them. */
  let textsUnsaved = 0;
  /** Loads the newest `.live` file once (tried again after a failure); no engine, no catch-up. */
  const loadTexts = (): Promise<void> =>
    (textsLoading ??= store.loadNewestLive(spaceId).then(
      (file) => {
        if (!file) return;
        texts.load(file);
        if (file.listingVersion === undefined) return;
        const names = file.filenames.map(parseNoteName);
        if (names.every((name) => name !== null)) corpus.primeListing(keys.live, file.listingVersion, sortOldestFirst(names));
      },
      (error: unknown) => {
        textsLoading = null;
        throw error;
      },
    ));
  /**
   * The texts file of these live notes, oldest first. With the version of live/ they were listed at
   * (the corpus's listing, whole: no tombstone filtered out of it) when every one of them has its
   * texts here: the next process then takes the file's names for live/ while the folder is at it.
   */
  const encodeTexts = (filenames: readonly string[], listingVersion: string | undefined): Buffer => {
    const entries = [...texts.of(filenames)];
    return encodeLiveTexts(spaceId, entries, entries.length === filenames.length ? listingVersion : undefined);
  };

  /**
   * Filenames indexed as h:, gathered only when inHistory cannot do without: a million of them took
   * 0.7 s to cut from the ids at each snapshot load, and 100 MB beside the index, for the rare fresh
   * live name that may already be in history.
   */
  let historyFilenames: Set<string> | null = null;
  const history = new Set<string>(); // history ids indexed: consolidations (their notes) and compactions (their pre-images)
  const preimages = new Map<string, NonNullable<SnapshotHeader['preimages']>[string]>(); // compaction id → what is indexed of it
  let lastLiveListing: readonly NoteName[] | undefined;
  let bank: SnapshotHeader['bank'] = {};
  let lastBankListing: unknown;
  let synthesis: SnapshotHeader['synthesis'] = null;
  const summaries = new Map<string, SummaryCoverage>();
  const lastSummaryListings = new Map<number, unknown>();
  const noteMetas = new Map<string, DocMeta | null>();
  /**
   * What the ranking asks of each search candidate (`candidate`), kept by the engine's document number
   * in two typed arrays: a pool of 200 recurs from query to query, and an array read each costs a
   * fraction of a lookup by id (three or four Map lookups a candidate were most of the re-ranking's
   * cost at 10,000 notes). `kinds`: 0 not known yet, else KIND_*; `places`: the note's place in
   * `placesOf` (-1 none, -2 not known yet). Dropped when the engine numbers its documents anew.
   */
  let byDoc: { index: TextIndex; numbering: number; kinds: Int32Array; places: Int32Array; placesOf: Places | null } | null = null;
  /** The agents of candidate notes, numbered for `byDoc.kinds`. */
  const agents: string[] = [];
  const agentNumbers = new Map<string, number>();
  const kindOf = (meta: DocMeta | null): number => {
    if (!meta) return KIND_OTHER;
    if (isDerivedSource(meta.source)) return KIND_DERIVED;
    if (meta.agent === undefined) return KIND_OTHER;
    let number = agentNumbers.get(meta.agent);
    if (number === undefined) {
      number = agents.push(meta.agent) - 1;
      agentNumbers.set(meta.agent, number);
    }
    return KIND_AGENT + number;
  };
  const candidateOf = (hit: SearchHit, kind: number, place: number): Candidate => ({
    id: hit.id,
    score: hit.score,
    agent: kind >= KIND_AGENT ? agents[kind - KIND_AGENT] : undefined,
    derived: kind === KIND_DERIVED,
    place,
  });
  const sectionMeta = new Map<string, { file: string; path: string[]; text: string }>();

  let loaded = false;
  let changes = 0;
  /** Expensive work since the last snapshot (a build from scratch, embeddings): saved whatever its size. */
  let worthSaving = false;
  /** The snapshot loaded had parts computed again (index-store.ts `rebuilt`): the next one is written whatever changed. */
  let resave = false;
  /**
   * Vectors computed since the last snapshot: saved even below SNAPSHOT_MIN_DOCUMENTS, since computing
   * them again in each new process is no cheap rebuild (an endpoint's tokens, a local model's CPU).
   */
  let vectorsUnsaved = false;
  /** The first refresh read everything: said once it is done, when the space is big enough to have had a snapshot. */
  let builtFromScratch = false;
  /** A snapshot was loaded and its timeline not yet checked against the history it indexes (placeHistory). */
  let unplaced = false;
  let lastSnapshotAt = 0;
  let refreshing: Promise<void> | null = null;
  let saving: Promise<void> = Promise.resolve();
  /** Index files this index was loaded from or wrote: deleted when it learns of a forget they predate (they may hold the text). */
  const snapshotsHeld: string[] = [];

  /** Every change of a document goes through these two: its vector, if any, is of the old text. */
  const put = (id: string, text: string) => {
    index.add(id, text);
    if (vectors) {
      vectors.delete(id);
      generations.set(id, (generations.get(id) ?? 0) + 1);
    }
    changes++;
  };
  const remove = (id: string) => {
    vectors?.delete(id);
    if (!index.has(id)) return;
    index.remove(id);
    changes++;
  };
  const addNote = (id: string, content: string, tags: readonly string[]) => put(id, noteText(content, tags));

  /** Consolidations with notes in the index (h: ids hold their id). */
  const consolidationsWithNotes = (): Set<string> => {
    const found = new Set<string>();
    for (const id of index.ids('h:')) found.add(id.slice(2, id.indexOf('/')));
    return found;
  };

  /**
   * Whether a live filename is already indexed from history (consolidated, its live file not yet
   * deleted), for the names of one listing. Without the filenames at hand, only consolidations
   * committed after the note was written (less the clock skew newest.ts allows) may hold it, found by
   * a binary search of their ids (they start with their commit stamp): a note newer than every one,
   * as fresh notes are, costs nothing; past a few candidates, the filenames are gathered once.
   */
  const historyLookup = (): ((filename: string) => boolean) => {
    const stamped = [...history].filter((cid) => STAMP.test(cid)).sort();
    const unstamped = [...history].filter((cid) => !STAMP.test(cid));
    return (filename) => {
      if (historyFilenames) return historyFilenames.has(filename);
      const written = stampMs(filename);
      if (Number.isFinite(written)) {
        const from = toStamp(new Date(written - COMMIT_SKEW_MS));
        const low = firstIndex(stamped.length, (i) => (stamped[i] as string) >= from);
        if (stamped.length - low + unstamped.length <= IN_HISTORY_PROBES)
          return [...stamped.slice(low), ...unstamped].some((cid) => index.has(noteDocId(filename, cid)));
      }
      historyFilenames = new Set();
      for (const id of index.ids('h:')) historyFilenames.add(id.slice(id.indexOf('/') + 1));
      return historyFilenames.has(filename);
    };
  };

  /** Loads the newest snapshot, or starts empty (everything is then read by the first refresh). */
  const load = async () => {
    const snapshot = await store.loadNewest(spaceId);
    if (!snapshot) {
      logger.debug(`search index of '${spaceId}': no snapshot, building it from the store`);
      worthSaving = true; // a first build is worth a snapshot whatever its size
      builtFromScratch = true;
      return;
    }
    index = snapshot.index;
    unplaced = true;
    // The ranking's timeline: absent (an older snapshot) or damaged, it is placed again from the records (placeHistory).
    const placed = snapshot.extra.get(TIMELINE_SECTION);
    try {
      timeline = placed ? Timeline.decode(placed) : new Timeline();
    } catch (error) {
      logger.warn(`search index snapshot ${snapshot.key}: its timeline is unreadable, placed again from the records`, { error: String(error) });
    }
    snapshotsHeld.push(snapshot.key);
    if (snapshot.rebuilt.length > 0) {
      // Computed again from the rest of the snapshot (a damaged table, an older format): written sound for the next process.
      logger.info(`search index snapshot ${snapshot.key}: computed ${snapshot.rebuilt.join(', ')} again; a new snapshot will follow`);
      resave = true;
    }
    // Only the live notes' ids are made strings (the engine compares the others' bytes).
    for (const id of index.ids('n:')) live.add(id.slice(2));
    const known = snapshot.header.preimages;
    for (const [cid, coverage] of Object.entries(known ?? {})) preimages.set(cid, coverage);
    // A snapshot from before compaction existed may list a compaction as indexed (it had no notes to
    // read): there, only consolidations with notes in the index count, and the rest is read again.
    const withNotes = known ? null : consolidationsWithNotes();
    for (const cid of snapshot.header.history) if (!withNotes || withNotes.has(cid)) history.add(cid);
    bank = snapshot.header.bank;
    for (const [file, entry] of Object.entries(bank))
      for (const section of entry.sections) sectionMeta.set(section.id, { file, path: section.path, text: section.text });
    synthesis = snapshot.header.synthesis;
    for (const [id, coverage] of Object.entries(snapshot.header.summaries)) summaries.set(id, coverage);
    if (snapshot.vectors && context.embeddings && snapshot.header.vectors?.model === context.embeddings.label) {
      try {
        vectors = loadVectorStore(snapshot.vectors);
      } catch (error) {
        logger.warn(`the embeddings in ${snapshot.key} are unusable (${(error as Error).message}); computing them again`);
      }
    }
    if (!resave) lastSnapshotAt = Date.now();
  };

  const refreshHistory = async (onProgress?: OnIndexProgress) => {
    const ids = await corpus.historyIds(spaceId);
    await corpus.sync(spaceId, ids);
    const present = new Set(ids);
    if (unplaced) await placeHistory();
    const fresh = ids.filter((cid) => !history.has(cid));
    for (const [done, cid] of fresh.entries()) {
      onProgress?.({ space_id: spaceId, phase: 'history', done, total: fresh.length });
      // Only new entries are read, and only once complete (their record written last). A damaged
      // record, notes.json or preimages.json is left out, and not marked as indexed: read again once repaired.
      const indexed = await corpus
        .record(spaceId, cid, { cache: false })
        .then(async (record) => {
          if (!record) return false;
          const indexed =
            record.kind === 'forget'
              ? await applyForget(record)
              : keepsPreimages(record)
                ? await indexPreimages(cid, record.committed_at)
                : await indexNotes(cid);
          timeline.placeRecord(cid, record);
          return indexed;
        })
        .catch((error: unknown) => corpus.skipDamaged('the search index', error, false));
      if (indexed) history.add(cid);
    }
    const gone = [...history].filter((cid) => !present.has(cid));
    if (gone.length === 0) return;
    for (const cid of gone) {
      history.delete(cid);
      timeline.drop(cid);
      for (const i of preimages.get(cid)?.sections.keys() ?? []) remove(preimageDocId(cid, i));
      preimages.delete(cid);
    }
    for (const id of [...index.ids('h:')]) {
      const meta = noteMeta(id);
      if (meta?.consolidation_id && !present.has(meta.consolidation_id)) {
        remove(id);
        historyFilenames?.delete(meta.ref);
      }
    }
  };

  /**
   * After a snapshot loads: places the history entries indexed but not in its timeline — all of them
   * for a snapshot written before it had one (or a damaged one) — from their records, and forgets the
   * entries the index does not hold. Past that, history and timeline change together; a record that
   * could not be read (`unplaced` stays set) is tried again at the next catch-up.
   */
  const placeHistory = async () => {
    for (const cid of [...timeline.cids()]) if (!history.has(cid)) timeline.drop(cid);
    const missing = [...history].filter((cid) => !timeline.has(cid));
    if (missing.length > 0) {
      await mapLimit(missing, storage.parallelism, async (cid) => {
        const record = await corpus.record(spaceId, cid, { cache: false }).catch((error: unknown) => corpus.skipDamaged('the search index', error, null));
        if (record) timeline.placeRecord(cid, record);
      });
      changes++;
      worthSaving = true; // a record read per consolidation: the next snapshot carries them
    }
    unplaced = [...history].some((cid) => !timeline.has(cid));
  };

  /** A consolidation's notes, moved from `n:` to `h:` documents. */
  const indexNotes = async (cid: string): Promise<true> => {
    for (const note of await corpus.historyNotes(spaceId, cid, { cache: false })) {
      remove(noteDocId(note.filename));
      live.delete(note.filename);
      texts.delete(note.filename);
      historyFilenames?.add(note.filename);
      addNote(noteDocId(note.filename, cid), note.content, note.tags);
    }
    return true;
  };

  /**
   * A forget (its history entry, found like any other): its notes leave the index and their vectors
   * with them; every summary is read again (those covering the notes were deleted, and a sealed one
   * is otherwise never re-read); snapshots that predate it are deleted, and a new one written.
   */
  const applyForget = async (record: HistoryRecord): Promise<true> => {
    const names = record.forget?.filenames ?? [];
    timeline.forget(names, record.forget?.consolidations ?? []);
    for (const filename of names) {
      live.delete(filename);
      texts.delete(filename);
      historyFilenames?.delete(filename);
      for (const id of [noteDocId(filename), ...(record.forget?.consolidations ?? []).map((cid) => noteDocId(filename, cid))]) {
        remove(id);
        noteMetas.delete(id);
      }
    }
    for (const id of summaries.keys()) remove(summaryDocId(id));
    summaries.clear();
    lastSummaryListings.clear();
    lastLiveListing = undefined;
    worthSaving = true;
    saving = saving.then(async () => {
      const doomed = snapshotsHeld.splice(0);
      if (doomed.length > 0)
        await storage.deleteMany(doomed).catch((error: unknown) => logger.warn('could not delete index snapshots', { error: String(error) }));
    });
    return true;
  };

  /** A compaction's pre-images, each section a `p:` document; its description kept beside (the snapshot carries it). */
  const indexPreimages = async (cid: string, committedAt: string): Promise<true> => {
    const sections = await corpus.historyPreimages(spaceId, cid);
    for (const [i, section] of sections.entries()) put(preimageDocId(cid, i), preimageText(section));
    preimages.set(cid, { committed_at: committedAt, sections: sections.map(({ filename, path }) => ({ filename, path })) });
    return true;
  };

  const refreshLive = async (onProgress?: OnIndexProgress) => {
    const names = await corpus.liveNames(spaceId);
    if (names === lastLiveListing) return; // the same listing: the folder did not change
    // What changed since the listing it last caught up to (a note or two, while notes are written),
    // or, the first time, every name.
    const { added, removed } = lastLiveListing ? diffListings(lastLiveListing, names) : { added: names, removed: null };
    const fresh = [];
    let inHistory: ((filename: string) => boolean) | undefined;
    for (const name of added) {
      if (live.has(name.filename)) continue;
      inHistory ??= historyLookup();
      if (!inHistory(name.filename)) fresh.push(name);
    }
    let done = 0;
    await mapLimit(fresh, storage.parallelism, async (name) => {
      const note = await corpus.liveNote(spaceId, name);
      onProgress?.({ space_id: spaceId, phase: 'live', done: ++done, total: fresh.length });
      if (!note) return; // consolidated since listed: history brings it
      live.add(name.filename);
      texts.set(name.filename, searchableTexts(note));
      addNote(noteDocId(name.filename), note.content, note.tags);
    });
    if (removed) {
      for (const { filename } of removed) {
        if (live.delete(filename)) remove(noteDocId(filename));
        texts.delete(filename);
      }
    } else {
      const listed = new Set(names.map((name) => name.filename));
      for (const filename of [...live]) {
        if (listed.has(filename)) continue;
        live.delete(filename);
        remove(noteDocId(filename));
      }
      texts.retain(listed);
    }
    lastLiveListing = names;
    timeline.setLive(names);
  };

  const refreshBank = async () => {
    const files = await corpus.cachedListing(keys.bank, async () => {
      const found: string[] = [];
      for await (const object of listAll(storage, keys.bank, { delimiter: '/' })) {
        const name = object.key.slice(keys.bank.length);
        if (isStoredBankFilename(name)) found.push(name);
      }
      return found;
    });
    if (files === lastBankListing) return;
    const next: SnapshotHeader['bank'] = {};
    await mapLimit(files, storage.parallelism, async (file) => {
      const known = bank[file];
      const info = await storage.stat(keys.bankFile(file));
      if (!info) return;
      if (known && known.etag === info.etag) {
        next[file] = known;
        return;
      }
      const object = await storage.get(keys.bankFile(file));
      if (!object) return;
      for (const section of known?.sections ?? []) remove(section.id);
      const sections = bankSections(file, object.body.toString('utf8'));
      for (const section of sections) {
        put(section.id, `${section.path.join(' ')}\n${section.text}`);
        sectionMeta.set(section.id, { file, path: section.path, text: section.text });
      }
      next[file] = { etag: object.etag, sections: sections.map(({ id, path, text }) => ({ id, path, text })) };
    });
    for (const [file, entry] of Object.entries(bank)) {
      if (next[file]) continue;
      for (const section of entry.sections) {
        remove(section.id);
        sectionMeta.delete(section.id);
      }
    }
    bank = next;
    lastBankListing = files;
  };

  const refreshSynthesis = async () => {
    const info = await storage.stat(keys.synthesis);
    if ((info?.etag ?? null) === (synthesis?.etag ?? null)) return;
    const object = info ? await storage.get(keys.synthesis) : null;
    remove(SYNTHESIS_DOC_ID);
    const text = object?.body.toString('utf8') ?? '';
    if (text.trim()) put(SYNTHESIS_DOC_ID, text);
    synthesis = object ? { etag: object.etag } : null;
  };

  const refreshSummaries = async () => {
    // The level folders that exist (one listing), then each of them: a space without summaries costs one request.
    const folders = new Set(await corpus.cachedListing(keys.summaries, () => listPrefixes(storage, keys.summaries)));
    for (let level = 1; level <= MAX_LEVEL; level++) {
      const folder = keys.summaryLevel(level);
      if (!folders.has(folder) && ![...summaries.values()].some((coverage) => coverage.level === level)) continue;
      const listing = await corpus.cachedListing(folder, async () => {
        const found: string[] = [];
        for await (const object of listAll(storage, folder, { delimiter: '/' })) if (object.key.endsWith('.json')) found.push(object.key);
        return found;
      });
      if (listing === lastSummaryListings.get(level)) continue;
      const ids = new Set<string>();
      await mapLimit(listing, storage.parallelism, async (key) => {
        const id = key.slice(folder.length, -'.json'.length);
        ids.add(id);
        const known = summaries.get(id);
        if (known?.sealed) return; // a sealed summary never changes
        const object = await storage.get(key);
        if (!object || object.etag === known?.etag) return;
        const record = parseRecord(object.body, { level, id });
        if (!record) {
          logger.warn(`summary ${key} is unreadable; left out of the search index`);
          return;
        }
        put(summaryDocId(id), summaryText(record));
        summaries.set(id, { etag: object.etag, level: record.level, sealed: record.sealed, range_start: record.range_start, range_end: record.range_end });
      });
      for (const [id, coverage] of [...summaries]) {
        if (coverage.level !== level || ids.has(id)) continue;
        summaries.delete(id);
        remove(summaryDocId(id));
      }
      lastSummaryListings.set(level, listing);
    }
  };

  /**
   * Writes a snapshot in the background when enough changed; `now` skips the interval (a process
   * about to exit), `force` every threshold (a repair that wants the store's snapshot current).
   */
  /** Enough changed since the last snapshot to write one (SNAPSHOT_AFTER_CHANGES, or a first build worth keeping). */
  const snapshotDue = () =>
    resave || (changes > 0 && (changes >= SNAPSHOT_AFTER_CHANGES || vectorsUnsaved || (worthSaving && index.size >= SNAPSHOT_MIN_DOCUMENTS)));

  const snapshotIfDue = (now = false, force = false) => {
    if (!force && !snapshotDue()) return;
    if (!force && !now && Date.now() - lastSnapshotAt < SNAPSHOT_MIN_INTERVAL_MS) return;
    lastSnapshotAt = Date.now();
    worthSaving = false;
    resave = false;
    vectorsUnsaved = false;
    // Encoded now, in one go: the header and the engine must describe the same instant.
    const snapshot = encodeSnapshot(
      snapshotHeader(),
      index,
      vectors && vectors.size > 0 && context.embeddings ? { model: context.embeddings.label, buffer: vectors.serialize() } : undefined,
      [timeline.section()],
    );
    const taken = changes;
    // The listing the index caught up to, with its version while the corpus still holds it as read at one.
    const version = lastLiveListing && corpus.listingVersion(keys.live, lastLiveListing);
    const liveNow = version !== undefined && lastLiveListing ? lastLiveListing.map((name) => name.filename) : [...live];
    saving = saving
      .then(async () => {
        // A space deleted meanwhile must not come back as an _index/ folder.
        if (!(await storage.stat(keys.meta))) return;
        // The texts of the notes it covers (those known: a note read from an older snapshot may have
        // none; live_search reads that one). Notes never change, so a text taken now is as good as one
        // taken at the encoding.
        const liveTexts = await loadTexts().then(
          () => encodeTexts(liveNow, version),
          () => undefined,
        );
        const written = await store.save(spaceId, { snapshot, ...(liveTexts ? { live: liveTexts } : {}) });
        snapshotsHeld.push(...written);
        changes -= Math.min(changes, taken);
        logger.debug(`search index of '${spaceId}': snapshot ${written.join(', ')} (${index.size} documents)`);
      })
      .catch((error: unknown) => logger.warn(`could not write a search index snapshot of '${spaceId}'`, { error: String(error) }));
  };

  /**
   * A process that only ran live_search, and read many notes the newest texts file did not cover
   * (none was ever written: no index was ever built): writes their texts alone, for the next process.
   * Only notes still live now go in — a note forgotten meanwhile has left live/.
   */
  const saveTextsIfDue = async (): Promise<void> => {
    if (loaded || textsUnsaved < SNAPSHOT_AFTER_CHANGES) return;
    textsUnsaved = 0;
    try {
      const listing = await corpus.liveNames(spaceId);
      const filenames = listing.map((name) => name.filename);
      texts.retain(new Set(filenames));
      if (!(await storage.stat(keys.meta))) return;
      snapshotsHeld.push(...(await store.save(spaceId, { live: encodeTexts(filenames, corpus.listingVersion(keys.live, listing)) })));
    } catch (error) {
      logger.warn(`could not write the live notes' texts of '${spaceId}'`, { error: String(error) });
    }
  };

  const snapshotHeader = (): Omit<SnapshotHeader, 'vectors'> => ({
    format: 'live-mem-index',
    engine: engine.name,
    space_id: spaceId,
    created_at: context.clock().toISOString(),
    history: [...history],
    preimages: Object.fromEntries(preimages),
    bank,
    synthesis,
    summaries: Object.fromEntries(summaries),
  });

  const refreshOnce = async (onProgress?: OnIndexProgress) => {
    if (!loaded) {
      await load();
      loaded = true;
    }
    await refreshHistory(onProgress); // before live/: a note consolidated meanwhile moves, never vanishes
    await refreshLive(onProgress);
    await Promise.all([refreshBank(), refreshSynthesis(), refreshSummaries()]);
    if (builtFromScratch) {
      builtFromScratch = false;
      // Freshly added documents take about three times the memory of the compact form a snapshot
      // loads into (a 20-note index: 200 KB against 63 KB of heap); a space too small for a
      // snapshot would otherwise keep them so for the life of the process.
      index.compact();
      // Below SNAPSHOT_MIN_DOCUMENTS no snapshot is ever written, so building is the normal path and
      // nothing to report; above it, a snapshot was expected and its absence cost this whole read.
      if (index.size >= SNAPSHOT_MIN_DOCUMENTS)
        logger.info(`search index of '${spaceId}': no usable snapshot, built it from the store (${index.size} documents)`);
    }
    snapshotIfDue();
  };

  /** Catches up with the store; concurrent callers share one refresh (and the first one's progress display). */
  const refresh = (onProgress?: OnIndexProgress): Promise<void> => {
    refreshing ??= refreshOnce(onProgress).finally(() => (refreshing = null));
    return refreshing;
  };

  return {
    refresh,

    get index(): TextIndex {
      return index;
    },

    get vectors(): VectorStore | null {
      return vectors;
    },

    /** Level 0 in walking order (timeline.ts), as of the last catch-up. */
    get timeline(): Timeline {
      return timeline;
    },

    /** Up to `limit` documents without a vector, each with its generation (for `setVector`). */
    missingVectors(limit: number): Array<{ id: string; generation: number }> {
      const missing: Array<{ id: string; generation: number }> = [];
      if (!vectors) return missing;
      for (const id of index.ids()) {
        if (missing.length >= limit) break;
        if (!vectors.has(id)) missing.push({ id, generation: generations.get(id) ?? 0 });
      }
      return missing;
    },

    /** Stores a document's vector, unless the document was replaced or removed since `generation`. */
    setVector(id: string, vector: Float32Array, generation: number): void {
      if (!vectors || !index.has(id) || (generations.get(id) ?? 0) !== generation) return;
      vectors.set(id, vector);
      changes++;
      worthSaving = true;
      vectorsUnsaved = true;
    },

    snapshotIfDue: () => snapshotIfDue(),

    /**
     * What live_search matches of live notes, by filename (live-texts.ts): loads the newest `.live`
     * file once, and nothing else — no engine, no catch-up (which notes are live is the caller's
     * listing). `remember` keeps the texts of a note the caller read; the next snapshot carries them.
     */
    async liveTexts(): Promise<LiveTextsLookup> {
      await loadTexts();
      return {
        matcher: (needle) => texts.matcher(needle),
        remember(filename, entry) {
          if (texts.get(filename)) return;
          texts.set(filename, entry);
          if (live.has(filename))
            changes++; // indexed without its texts (an older snapshot): worth the next one
          else if (!loaded) textsUnsaved++;
        },
      };
    },

    /** Writes a snapshot of the index as it is now, whatever changed, and waits for it. */
    saveSnapshot(): Promise<void> {
      snapshotIfDue(true, true);
      return saving;
    },

    /** A search hit as the ranking weighs it (ranking.ts Candidate): who wrote it, whether it is derived text, its place in `places`. */
    candidate(hit: SearchHit, places: Places): Candidate {
      const doc = hit.doc;
      if (doc === undefined) {
        const meta = this.meta(hit.id);
        return candidateOf(hit, kindOf(meta), notePlace(meta, places));
      }
      if (byDoc?.index !== index || byDoc.numbering !== index.numbering) {
        const size = Math.max(1024, doc + 1);
        byDoc = { index, numbering: index.numbering, kinds: new Int32Array(size), places: new Int32Array(size).fill(-2), placesOf: places };
        agents.length = 0;
        agentNumbers.clear();
      }
      if (doc >= byDoc.kinds.length) {
        const size = Math.max(doc + 1, byDoc.kinds.length * 2);
        const kinds = new Int32Array(size);
        kinds.set(byDoc.kinds);
        const placed = new Int32Array(size).fill(-2);
        placed.set(byDoc.places);
        byDoc.kinds = kinds;
        byDoc.places = placed;
      }
      if (byDoc.placesOf !== places) {
        byDoc.places.fill(-2);
        byDoc.placesOf = places;
      }
      let kind = byDoc.kinds[doc] as number;
      let place = byDoc.places[doc] as number;
      if (kind === 0 || place === -2) {
        const meta = this.meta(hit.id);
        kind = kindOf(meta);
        place = notePlace(meta, places);
        // A document not described (yet) is asked again next time.
        if (meta) {
          byDoc.kinds[doc] = kind;
          byDoc.places[doc] = place;
        }
      }
      return candidateOf(hit, kind, place);
    },

    /** What a document is, from its id (notes) or what the index keeps beside (sections, summaries). */
    meta(id: string): DocMeta | null {
      // Note ids never change meaning: their descriptions are parsed once (filters ask per candidate).
      let note = noteMetas.get(id);
      if (note === undefined && (id.startsWith('n:') || id.startsWith('h:'))) {
        note = noteMeta(id);
        if (noteMetas.size >= NOTE_METAS_KEPT) noteMetas.clear();
        noteMetas.set(id, note);
      }
      if (note) return note;
      if (id === SYNTHESIS_DOC_ID) return { id, source: 'synthesis', level: null, ref: '_synthesis.md' };
      if (id.startsWith('b:')) {
        const section = sectionMeta.get(id);
        return section ? { id, source: 'bank', level: null, ref: bankRef(section) } : null;
      }
      const preimage = parsePreimageDocId(id);
      if (preimage) {
        const compaction = preimages.get(preimage.compactionId);
        const section = compaction?.sections[preimage.i];
        return compaction && section ? preimageMeta(preimage.compactionId, preimage.i, compaction.committed_at, section) : null;
      }
      if (id.startsWith('m:')) {
        const summary = summaries.get(id.slice(2));
        return summary
          ? { id, source: 'summary', level: summary.level, ref: id.slice(2), range_start: summary.range_start, range_end: summary.range_end }
          : null;
      }
      return null;
    },

    /** Summaries indexed, by id (level, range, whether sealed). */
    summaryCoverage: (): ReadonlyMap<string, SummaryCoverage> => summaries,

    /** The text of a bank section, from memory. */
    sectionText: (id: string): string | undefined => sectionMeta.get(id)?.text,
    /** A bank section's file and heading path (provenance is kept by them). */
    section: (id: string): { file: string; path: string[] } | undefined => sectionMeta.get(id),

    /** True while a refresh runs: the index is in use and not to be evicted. */
    get busy(): boolean {
      return refreshing !== null;
    },

    /**
     * An estimate of the memory this index holds, in bytes: the engine's (its own estimate), the
     * vectors', and what is kept beside them — note descriptions parsed, filenames, bank sections'
     * text, summaries' and compactions' coverage. Filenames are costed by the average of a sample.
     */
    bytes(): number {
      let total = index.bytes() + (vectors?.bytes() ?? 0) + texts.bytes() + timeline.bytes();
      const names = live.size + (historyFilenames?.size ?? 0);
      if (names > 0) {
        let sampled = 0;
        let chars = 0;
        for (const name of live.size > 0 ? live : (historyFilenames ?? [])) {
          chars += name.length;
          if (++sampled >= 32) break;
        }
        total += names * (ENTRY_BYTES + chars / sampled);
      }
      total += noteMetas.size * NOTE_META_BYTES + generations.size * ENTRY_BYTES + (byDoc ? byDoc.kinds.byteLength + byDoc.places.byteLength : 0);
      for (const section of sectionMeta.values()) total += COVERAGE_BYTES + section.text.length;
      total += (summaries.size + preimages.size + history.size) * COVERAGE_BYTES;
      return Math.round(total);
    },

    /**
     * Before the index leaves memory (evicted): if it holds anything the store's newest snapshot does
     * not, catches up and writes one, whatever its size, so that loading it again is one read; then
     * waits for every write.
     */
    async release(): Promise<void> {
      await saveTextsIfDue();
      if (changes === 0 && !worthSaving && !resave) return saving;
      // Caught up first: a forget committed since the index was last searched must not be written
      // back into a snapshot (the forget deleted those that held the notes). Failing, nothing is written.
      try {
        await refresh();
      } catch (error) {
        logger.warn(`search index of '${spaceId}' left memory without a snapshot: ${(error as Error).message}`);
        return saving;
      }
      snapshotIfDue(true, true);
      return saving;
    },

    /**
     * Writes a snapshot now if one is due (whatever the interval), then waits for every write. Caught
     * up first, as before an eviction: a forget another process committed since this index was last
     * searched must not be written back into a snapshot (the forget deleted those that held the notes).
     */
    async idle(): Promise<void> {
      await saveTextsIfDue();
      if (snapshotDue()) {
        try {
          const taken = lastSnapshotAt;
          await refresh();
          if (lastSnapshotAt === taken) snapshotIfDue(true); // unless the catch-up wrote one itself
        } catch (error) {
          logger.warn(`search index of '${spaceId}': no snapshot at exit: ${(error as Error).message}`);
        }
      }
      return saving;
    },
  };
}

export type SpaceIndex = ReturnType<typeof createSpaceIndex>;
