import { createAnalyzer } from '../../search/analyze.js';
import { CorruptIndexError, type TextIndexEngine } from '../../search/types.js';
import type { CoreContext } from '../context.js';
import type { Corpus } from '../note/corpus.js';
import { createDocumentText } from './document-text.js';
import { createEmbeddingScheduler } from './embedding-scheduler.js';
import { createIndexCache } from './index-cache.js';
import { createIndexStore } from './index-store.js';
import { createNeighbours } from './neighbours.js';
import { createRecallQuery, type RecallOptions } from './recall-query.js';
import type { Sources } from './sources.js';
import { createSpaceIndex, type SpaceIndex } from './space-index.js';

export { RECALL_SOURCES } from './query-filter.js';
export { MAX_SEARCH_LIMIT, type MemorySearchInput, type RecallHit, type RecallOptions } from './recall-query.js';

/**
 * Recall: ranked search over every level of a space (live and consolidated notes, bank sections,
 * the synthesis, summaries). One index per space per process (space-index.ts), kept in the index
 * cache (index-cache.ts) and brought up to date before each answer; embeddings computed in the
 * background (embedding-scheduler.ts); the query pipeline in recall-query.ts.
 */
export function createRecallService(context: CoreContext, corpus: Corpus, engine: TextIndexEngine, sources: Sources) {
  const store = createIndexStore(context, engine);
  const { readSummary, textOf } = createDocumentText(context, corpus);
  const embeddings = createEmbeddingScheduler(context, textOf, (spaceId, index) => indexes.reweigh(spaceId, index));
  const indexes = createIndexCache(context, corpus, (spaceId) => createSpaceIndex({ context, corpus, engine, store, spaceId }), embeddings.running);

  const caughtUp = async (spaceId: string, onProgress?: RecallOptions['onProgress']): Promise<SpaceIndex> => {
    const index = await indexes.open(spaceId);
    await index.refresh(onProgress);
    embeddings.start(spaceId, index);
    indexes.account(spaceId, index);
    return index;
  };

  /**
   * An index whose snapshot proved damaged as it was read (a part the engine checks at first use:
   * CorruptIndexError) is dropped unsaved and its snapshot deleted; the space's index is then opened
   * again (from an older snapshot, else the store). Concurrent callers that met the same damage drop it once.
   */
  const reopen = async (spaceId: string, damaged: SpaceIndex, error: Error, onProgress?: RecallOptions['onProgress']): Promise<SpaceIndex> => {
    if (indexes.peek(spaceId) === damaged) {
      await damaged.discardSnapshot(error);
      indexes.drop(spaceId, damaged);
    }
    return caughtUp(spaceId, onProgress);
  };

  /** The space's index, caught up with the store (opened if need be; rebuilt if its snapshot proves damaged as it catches up). */
  const indexOf = async (spaceId: string, onProgress?: RecallOptions['onProgress']): Promise<SpaceIndex> => {
    try {
      return await caughtUp(spaceId, onProgress);
    } catch (error) {
      const damaged = indexes.peek(spaceId);
      if (!(error instanceof CorruptIndexError) || !damaged) throw error;
      return reopen(spaceId, damaged, error, onProgress);
    }
  };

  /**
   * Neighbours (memory_context, hits with neighbours) walk the space's timeline. Both ask right after a
   * search caught the index up: the index in memory is used as it is (catching it up again listed the
   * store a second time per answer); one not in memory is opened and caught up.
   */
  const neighbours = createNeighbours(corpus, async (spaceId) => (indexes.peek(spaceId) ?? (await indexOf(spaceId))).timeline.places());
  const analyzer = createAnalyzer({ cacheLimit: 20_000 });

  return {
    search: createRecallQuery({ context, analyzer, indexOf, reopen, embeddings, textOf, sources }),
    /** How far the space's embeddings are (space_info): counted only when this process holds its index. */
    embeddingProgress: (spaceId: string) => embeddings.progress(spaceId, indexes.peek(spaceId)),
    /** The notes written around a note (neighbours.ts): what memory_context and hits with neighbours show. */
    neighbours,
    indexOf,
    readSummary,
    textOf,

    /** The space's index snapshots in the store, newest first, each decoded or with its problem (changes nothing). */
    snapshots: (spaceId: string) => store.inspect(spaceId),

    /**
     * Brings the space's index up to date with the store (a damaged newest snapshot is deleted and the
     * index rebuilt) and writes a snapshot of it now, so the store's newest snapshot covers everything.
     */
    async rebuildIndex(spaceId: string, options: RecallOptions = {}): Promise<void> {
      let index = await indexOf(spaceId, options.onProgress);
      try {
        index.index.verify(); // what its load left to be checked as it is read
      } catch (error) {
        if (!(error instanceof CorruptIndexError)) throw error;
        index = await reopen(spaceId, index, error, options.onProgress);
      }
      await index.saveSnapshot();
    },

    /**
     * What live_search matches of the space's live notes (space-index.ts `liveTexts`): loads only the
     * newest `.live` file into the space's index — kept, and counted in the memory budget, for a
     * later search or catch-up to go on from.
     */
    async liveTexts(spaceId: string) {
      const index = await indexes.open(spaceId);
      const lookup = await index.liveTexts();
      indexes.account(spaceId, index);
      return lookup;
    },

    /** Brings the space's index up to date if this process has one open (after a forget: it drops the notes now). */
    async refreshIfOpen(spaceId: string): Promise<void> {
      const index = indexes.peek(spaceId);
      try {
        await index?.refresh();
      } catch (error) {
        if (!(error instanceof CorruptIndexError) || !index) throw error;
        await reopen(spaceId, index, error);
      }
    },

    /** Resolves once background snapshot writes have finished (a CLI process waits before it exits). */
    async idle(): Promise<void> {
      await embeddings.idle();
      await indexes.idle();
    },

    /** The indexes in memory, least recently used first, with their estimated bytes (tests, the bench). */
    memory: indexes.memory,
  };
}

export type RecallService = ReturnType<typeof createRecallService>;
