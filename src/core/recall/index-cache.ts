import { BoundedCache } from '../../shared/bounded-cache.js';
import type { CoreContext } from '../context.js';
import type { Corpus } from '../note/corpus.js';
import type { SpaceIndex } from './space-index.js';

/**
 * The space indexes in memory, on the shared weighted cache (shared/bounded-cache.ts): each weighs its
 * memory estimate, taken after its last refresh or embedding batch. Past LIVE_MEM_INDEX_MEMORY_MB — the
 * indexes' estimates and the corpus's caches' (note texts, records: a quarter of the budget at most,
 * corpus.ts), which leave with their space's index — the least recently used are evicted: each writes a
 * snapshot first if it holds unsaved changes, so that loading it again is one read. The index just
 * asked for stays (one space larger than the budget is still searched), and so does one being
 * refreshed or embedded (`inUse`).
 */
export function createIndexCache(context: CoreContext, corpus: Corpus, make: (spaceId: string) => SpaceIndex, inUse: (spaceId: string) => boolean) {
  /** Evicted indexes still writing their snapshot: a search of the space waits, then loads it. */
  const releasing = new Map<string, Promise<void>>();
  let keep: string | undefined;
  const indexes = new BoundedCache<SpaceIndex>(context.indexMemoryBytes, {
    evictable: (spaceId, index) => spaceId !== keep && !index.busy && !inUse(spaceId),
    outside: (spaceId) => corpus.bytes(spaceId), // released with it
    onEvict: (spaceId, index) => {
      const done = index
        .release()
        .catch(() => undefined) // logged by the index; the store stays the truth
        .finally(() => {
          corpus.release(spaceId);
          if (releasing.get(spaceId) === done) releasing.delete(spaceId);
        });
      releasing.set(spaceId, done);
    },
  });

  return {
    /** The space's index if it is in memory (its recency unchanged). */
    peek: (spaceId: string): SpaceIndex | undefined => indexes.peek(spaceId),

    /** The space's index, opened if it is not in memory (once its eviction's snapshot is written), now the most recently used. */
    async open(spaceId: string): Promise<SpaceIndex> {
      await releasing.get(spaceId);
      const index = indexes.get(spaceId);
      if (index) return index;
      const made = make(spaceId);
      keep = spaceId;
      indexes.set(spaceId, made, 0); // weighed once refreshed (account)
      return made;
    },

    /** Drops the space's index if it is this one, without a snapshot (a damaged one: recall-service.ts `reopen`). */
    drop(spaceId: string, index: SpaceIndex): boolean {
      if (indexes.peek(spaceId) !== index) return false;
      indexes.delete(spaceId);
      return true;
    },

    /** Takes the index's memory estimate after it grew, and evicts others over the budget. */
    account(spaceId: string, index: SpaceIndex): void {
      if (indexes.peek(spaceId) !== index) return; // evicted meanwhile
      indexes.reweigh(spaceId, index.bytes());
      keep = spaceId;
      indexes.trim(corpus.bytes());
    },

    /** Weighs the index anew (after an embedding batch) without evicting anything. */
    reweigh(spaceId: string, index: SpaceIndex): void {
      if (indexes.peek(spaceId) === index) indexes.reweigh(spaceId, index.bytes());
    },

    /** Waits for every index's background writes, and for evicted ones' snapshots. */
    async idle(): Promise<void> {
      await Promise.all([...indexes.values()].map((index) => index.idle()));
      await Promise.all(releasing.values());
    },

    /** The indexes in memory, least recently used first, with their estimated bytes (tests, the bench). */
    memory: (): Array<{ space_id: string; bytes: number }> =>
      [...indexes.keys()].map((spaceId) => ({ space_id: spaceId, bytes: indexes.weightOfKey(spaceId) ?? 0 })),
  };
}

export type IndexCache = ReturnType<typeof createIndexCache>;
