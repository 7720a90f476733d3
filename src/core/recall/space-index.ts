import { CorruptIndexError, type SearchHit, type TextIndex, type TextIndexEngine } from '../../search/types.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import type { Corpus } from '../note/corpus.js';
import type { LiveTextsLookup } from '../note/note-text.js';
import type { DocMeta } from './documents.js';
import { Describer, filenamesBytes } from './describer.js';
import { BankFeeder } from './feed-bank.js';
import { HistoryFeeder } from './feed-history.js';
import { LiveFeeder } from './feed-live.js';
import { SummariesFeeder } from './feed-summaries.js';
import { SynthesisFeeder } from './feed-synthesis.js';
import { IndexDocuments, type OnIndexProgress } from './index-documents.js';
import type { IndexStore, SnapshotHeader, SummaryCoverage } from './index-store.js';
import type { Candidate } from './ranking.js';
import { SNAPSHOT_MIN_DOCUMENTS, SnapshotWriter } from './snapshot-writer.js';
import { type Places, Timeline, TIMELINE_SECTION } from './timeline.js';
import { loadVectorStore } from './vectors.js';
import type { VectorStore } from './vectors.js';

export type { IndexProgress } from './index-documents.js';
export { SNAPSHOT_AFTER_CHANGES } from './snapshot-writer.js';

interface SpaceIndexOptions {
  context: CoreContext;
  corpus: Corpus;
  engine: TextIndexEngine;
  store: IndexStore;
  spaceId: string;
}

/** The parts of one space's index: its documents, a feeder per source, what describes a document, the snapshot writer. */
function createParts({ context, corpus, engine, store, spaceId }: SpaceIndexOptions) {
  const { storage, logger } = context;
  const keys = spaceKeys(spaceId);
  const docs = new IndexDocuments(engine, context.embeddings !== undefined);
  const live = new LiveFeeder(docs, corpus, store, storage, spaceId, keys);
  const bank = new BankFeeder(docs, corpus, storage, keys);
  const synthesis = new SynthesisFeeder(docs, storage, keys);
  const summaries = new SummariesFeeder(docs, corpus, storage, logger, keys);
  const header = (): Omit<SnapshotHeader, 'vectors'> => ({
    format: 'live-mem-index',
    engine: engine.name,
    space_id: spaceId,
    created_at: context.clock().toISOString(),
    history: [...history.ids],
    preimages: Object.fromEntries(history.preimages),
    bank: bank.files,
    synthesis: synthesis.coverage,
    summaries: summaries.header(),
  });
  const writer = new SnapshotWriter(context, docs, live, corpus, store, spaceId, keys, header);
  const history: HistoryFeeder = new HistoryFeeder(docs, live, corpus, storage, spaceId, {
    forgetId: (id) => describer.forget(id),
    forgotten: () => {
      summaries.reset();
      live.lastListing = undefined;
      docs.worthSaving = true;
      writer.dropHeld();
    },
  });
  const describer = new Describer(docs, { bank, history, summaries });
  return { docs, live, history, bank, synthesis, summaries, describer, writer };
}

type Parts = ReturnType<typeof createParts>;

/** Loads the newest snapshot into the parts; false when there is none (everything is then read by the first refresh). */
async function loadSnapshot(parts: Parts, { context, store, spaceId }: SpaceIndexOptions): Promise<boolean> {
  const { docs } = parts;
  const { logger } = context;
  const snapshot = await store.loadNewest(spaceId);
  if (!snapshot) {
    logger.debug(`search index of '${spaceId}': no snapshot, building it from the store`);
    docs.worthSaving = true; // a first build is worth a snapshot whatever its size
    return false;
  }
  docs.index = snapshot.index;
  // The ranking's timeline: absent (an older snapshot) or damaged, it is placed again from the records (HistoryFeeder.place).
  const placed = snapshot.extra.get(TIMELINE_SECTION);
  try {
    docs.timeline = placed ? Timeline.decode(placed) : new Timeline();
  } catch (error) {
    logger.warn(`search index snapshot ${snapshot.key}: its timeline is unreadable, placed again from the records`, { error: String(error) });
  }
  if (snapshot.rebuilt.length > 0) {
    // Computed again from the rest of the snapshot (a damaged table, an older format): written sound for the next process.
    logger.info(`search index snapshot ${snapshot.key}: computed ${snapshot.rebuilt.join(', ')} again; a new snapshot will follow`);
    docs.resave = true;
  }
  parts.live.fromSnapshot();
  parts.history.fromSnapshot(snapshot.header);
  parts.bank.fromSnapshot(snapshot.header);
  parts.synthesis.fromSnapshot(snapshot.header);
  parts.summaries.fromSnapshot(snapshot.header);
  if (snapshot.vectors && context.embeddings && snapshot.header.vectors?.model === context.embeddings.label) {
    try {
      docs.vectors = loadVectorStore(snapshot.vectors);
    } catch (error) {
      logger.warn(`the embeddings in ${snapshot.key} are unusable (${(error as Error).message}); computing them again`);
    }
  }
  parts.writer.loaded(snapshot.key);
  return true;
}

/**
 * A first build is done: freshly added documents take about three times the memory of the compact
 * form a snapshot loads into (a 20-note index: 200 KB against 63 KB of heap); a space too small for a
 * snapshot would otherwise keep them so for the life of the process. Below SNAPSHOT_MIN_DOCUMENTS no
 * snapshot is ever written, so building is the normal path and nothing to report; above it, a
 * snapshot was expected and its absence cost this whole read.
 */
function afterFirstBuild(docs: IndexDocuments, { context, spaceId }: SpaceIndexOptions): void {
  docs.index.compact();
  if (docs.index.size >= SNAPSHOT_MIN_DOCUMENTS)
    context.logger.info(`search index of '${spaceId}': no usable snapshot, built it from the store (${docs.index.size} documents)`);
}

/**
 * One space's search index in this process: documents (see documents.ts) in a text engine, with
 * what they cover. `refresh` brings it up to date with the store by reading only what is new —
 * listings are skipped where the driver's folder version says nothing changed — and every
 * read-only answer goes through it. It never writes to the store except snapshots, in the
 * background, and nothing waits on it to write a note.
 */
export function createSpaceIndex(options: SpaceIndexOptions) {
  const { context, spaceId } = options;
  const parts = createParts(options);
  const { docs, live, history, bank, synthesis, summaries, describer, writer } = parts;
  let loaded = false;
  /** The first refresh read everything: said once it is done, when the space is big enough to have had a snapshot. */
  let builtFromScratch = false;
  let refreshing: Promise<void> | null = null;

  const refreshOnce = async (onProgress?: OnIndexProgress) => {
    if (!loaded) {
      builtFromScratch = !(await loadSnapshot(parts, options));
      loaded = true;
    }
    await history.refresh(onProgress); // before live/: a note consolidated meanwhile moves, never vanishes
    await live.refresh(() => history.lookup(), onProgress);
    await Promise.all([bank.refresh(), synthesis.refresh(), summaries.refresh()]);
    if (builtFromScratch) {
      builtFromScratch = false;
      afterFirstBuild(docs, options);
    }
    writer.ifDue();
  };

  /** Catches up with the store; concurrent callers share one refresh (and the first one's progress display). */
  const refresh = (onProgress?: OnIndexProgress): Promise<void> => {
    refreshing ??= refreshOnce(onProgress).finally(() => (refreshing = null));
    return refreshing;
  };

  /** Caught up, then `write` (a forget committed since the index was last searched must not be written back into a snapshot). */
  const catchUpThen = async (failed: string, write: () => void): Promise<void> => {
    try {
      await refresh();
    } catch (error) {
      context.logger.warn(`search index of '${spaceId}'${failed}: ${(error as Error).message}`);
      return;
    }
    try {
      write();
    } catch (error) {
      // Its snapshot proved damaged as the new one was encoded: nothing is written; the next search rebuilds it (recall-service.ts).
      if (!(error instanceof CorruptIndexError)) throw error;
      context.logger.warn(`search index of '${spaceId}'${failed}: ${error.message}`);
    }
  };

  return {
    refresh,
    get index(): TextIndex {
      return docs.index;
    },
    get vectors(): VectorStore | null {
      return docs.vectors;
    },
    /** Level 0 in walking order (timeline.ts), as of the last catch-up. */
    get timeline(): Timeline {
      return docs.timeline;
    },
    missingVectors: (limit: number) => docs.missingVectors(limit),
    setVector: (id: string, vector: Float32Array, generation: number) => docs.setVector(id, vector, generation),
    snapshotIfDue: () => writer.ifDue(),
    /** What live_search matches of live notes (feed-live.ts `lookup`): no engine, no catch-up. */
    liveTexts: (): Promise<LiveTextsLookup> => live.lookup(() => loaded),
    /**
     * The snapshot this index was loaded from proved damaged where it is checked as it is read (the
     * engine threw CorruptIndexError): deleted, and logged. The caller drops this index unsaved.
     */
    async discardSnapshot(error: Error): Promise<void> {
      const key = writer.loadedKey;
      context.logger.warn(`search index of '${spaceId}': snapshot ${key ?? '(none)'} is damaged (${error.message}); deleting it and rebuilding the index`);
      if (key !== undefined) await context.storage.delete(key).catch(() => undefined);
    },
    /** Writes a snapshot of the index as it is now, whatever changed, and waits for it. */
    saveSnapshot(): Promise<void> {
      writer.ifDue(true, true);
      return writer.saving;
    },
    candidate: (hit: SearchHit, places: Places): Candidate => describer.candidate(hit, places),
    meta: (id: string): DocMeta | null => describer.meta(id),
    /** The note at a place of the timeline as a candidate, if indexed (Describer.answerAt): no I/O. */
    answerAt: (place: number, places: Places, near: { place: number; doc: number | undefined }, score: number): Candidate | null =>
      describer.answerAt(place, places, near, score),
    /** Summaries indexed, by id (level, range, whether sealed). */
    summaryCoverage: (): ReadonlyMap<string, SummaryCoverage> => summaries.coverage,
    /** The text of a bank section, from memory. */
    sectionText: (id: string): string | undefined => bank.section(id)?.text,
    /** A bank section's file and heading path (provenance is kept by them). */
    section: (id: string): { file: string; path: string[] } | undefined => bank.section(id),
    /** True while a refresh runs: the index is in use and not to be evicted. */
    get busy(): boolean {
      return refreshing !== null;
    },
    /**
     * An estimate of the memory this index holds, in bytes: the documents' (engine, vectors,
     * timeline), the live texts', and what is kept beside — note descriptions parsed, filenames, bank
     * sections' text, summaries' and compactions' coverage.
     */
    bytes(): number {
      const beside = filenamesBytes(live.names, history.filenames) + describer.bytes() + bank.bytes() + summaries.bytes() + history.bytes();
      return Math.round(docs.bytes() + live.texts.bytes() + beside);
    },
    /**
     * Before the index leaves memory (evicted): if it holds anything the store's newest snapshot does
     * not, catches up and writes one, whatever its size, so that loading it again is one read; then
     * waits for every write.
     */
    async release(): Promise<void> {
      await writer.saveTextsIfDue(loaded);
      if (docs.changes === 0 && !docs.worthSaving && !docs.resave) return writer.saving;
      await catchUpThen(' left memory without a snapshot', () => writer.ifDue(true, true));
      return writer.saving;
    },
    /** Writes a snapshot now if one is due (whatever the interval), caught up first as before an eviction; then waits for every write. */
    async idle(): Promise<void> {
      await writer.saveTextsIfDue(loaded);
      if (writer.due()) {
        const taken = writer.lastAt;
        // Unless the catch-up wrote one itself.
        await catchUpThen(': no snapshot at exit', () => (writer.lastAt === taken ? writer.ifDue(true) : undefined));
      }
      return writer.saving;
    },
  };
}

export type SpaceIndex = ReturnType<typeof createSpaceIndex>;
