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
  const { readSummary, textOf, anchorsOf } = createDocumentText(context, corpus);
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

  /** Reopens a damaged index (reopen) and retries once: IndexRecovery (recall-query.ts), the one shape of every reader of an index. */
  async function withIndexRecovery<T>(
    spaceId: string,
    attempt: () => T | Promise<T>,
    damaged: () => SpaceIndex | undefined,
    retry: (reopened: SpaceIndex) => T | Promise<T>,
    onProgress?: RecallOptions['onProgress'],
  ): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      const index = damaged();
      if (!(error instanceof CorruptIndexError) || !index) throw error;
      return retry(await reopen(spaceId, index, error, onProgress));
    }
  }

  /** The index reopened, as it is: reopening is itself a catch-up, what indexOf and refreshIfOpen attempted. */
  const reopened = (index: SpaceIndex): SpaceIndex => index;

  /**
   * The space's index, caught up with the store (opened if need be; rebuilt if its snapshot proves damaged
   * as it catches up: the index then in memory is the damaged one).
   */
  const indexOf = (spaceId: string, onProgress?: RecallOptions['onProgress']): Promise<SpaceIndex> =>
    withIndexRecovery(
      spaceId,
      () => caughtUp(spaceId, onProgress),
      () => indexes.peek(spaceId),
      reopened,
      onProgress,
    );

  /**
   * Neighbours (memory_context, hits with neighbours) walk the space's timeline. Both ask right after a
   * search caught the index up: the index in memory is used as it is (catching it up again listed the
   * store a second time per answer); one not in memory is opened and caught up.
   */
  const neighbours = createNeighbours(corpus, async (spaceId) => (indexes.peek(spaceId) ?? (await indexOf(spaceId))).timeline.places());
  const analyzer = createAnalyzer({ cacheLimit: 20_000 });

  return {
    search: createRecallQuery({ context, analyzer, indexOf, withIndexRecovery, embeddings, textOf, anchorsOf, sources }),
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
      const index = await indexOf(spaceId, options.onProgress);
      // What its load left to be checked as it is read; an index reopened is saved as the reopening left it (not checked again).
      const checked = await withIndexRecovery(
        spaceId,
        () => {
          index.index.verify();
          return index;
        },
        () => index,
        reopened,
        options.onProgress,
      );
      await checked.saveSnapshot();
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
      await withIndexRecovery(
        spaceId,
        () => index?.refresh(),
        () => index,
        () => undefined,
      );
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
