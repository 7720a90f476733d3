import { isLiveMemError } from '../../shared/errors.js';
import type { EmbeddingsProgress } from '../../llm/embeddings.js';
import type { CoreContext } from '../context.js';
import { meteredEmbed } from '../spend/meter.js';
import type { DocMeta } from './documents.js';
import type { SpaceIndex } from './space-index.js';

/** Documents embedded per request, the characters of each sent, and how long a request may take. */
export const EMBED_BATCH = 64;
const EMBED_MAX_CHARS = 8_000;
const EMBED_TIMEOUT_MS = 30_000;
/** After a failure, embeddings of a space wait this long before trying again. */
const EMBED_RETRY_MS = 60_000;

/**
 * Computes the embeddings of documents that have none, a batch at a time, in the background: never
 * on a write path, never twice at once for a space. A failing endpoint is logged once and tried again
 * a minute later (on the context's monotonic clock); meanwhile search is BM25 alone.
 */
export function createEmbeddingScheduler(
  context: CoreContext,
  textOf: (spaceId: string, index: SpaceIndex, meta: DocMeta) => Promise<string | null>,
  /** Called after a run ends well: the index grew (its memory estimate is taken anew). */
  grown: (spaceId: string, index: SpaceIndex) => void,
) {
  const running = new Map<string, Promise<void>>();
  const pausedUntil = new Map<string, number>();
  /** Why a space's embeddings last paused (space_info). */
  const errors = new Map<string, string>();
  const paused = (spaceId: string): boolean => (pausedUntil.get(spaceId) ?? Number.NEGATIVE_INFINITY) > context.monotonic();

  const embedAll = async (spaceId: string, index: SpaceIndex, embeddings: NonNullable<CoreContext['embeddings']>): Promise<void> => {
    for (;;) {
      const batch = index.missingVectors(embeddings.batchSize ?? EMBED_BATCH);
      if (batch.length === 0) break;
      const texts = await Promise.all(
        batch.map(async ({ id }) => {
          const meta = index.meta(id);
          return (meta ? await textOf(spaceId, index, meta) : null)?.slice(0, EMBED_MAX_CHARS) ?? '';
        }),
      );
      const vectors = await meteredEmbed(context, embeddings, { spaceId, purpose: 'embeddings' }, texts, EMBED_TIMEOUT_MS);
      batch.forEach(({ id, generation }, i) => index.setVector(id, vectors[i] as Float32Array, generation));
    }
    index.snapshotIfDue();
    errors.delete(spaceId);
    grown(spaceId, index);
  };

  return {
    /** Whether the space's embeddings are being computed (its index is in use). */
    running: (spaceId: string): boolean => running.has(spaceId),

    /** Starts computing the missing embeddings of the space, unless a run is under way or paused. */
    start(spaceId: string, index: SpaceIndex): void {
      const embeddings = context.embeddings;
      if (!embeddings || running.has(spaceId) || paused(spaceId)) return;
      const run = embedAll(spaceId, index, embeddings)
        .catch((error: unknown) => {
          pausedUntil.set(spaceId, context.monotonic() + EMBED_RETRY_MS);
          errors.set(spaceId, (error as Error).message);
          context.logger.warn(`embeddings of '${spaceId}' paused for a minute: ${(error as Error).message}; search is BM25 alone meanwhile`);
        })
        .finally(() => running.delete(spaceId));
      running.set(spaceId, run);
    },

    /**
     * The query's embedding, or null: BM25 alone. Without a model or vectors yet, nothing to say; a
     * search never fails for want of one, so a query refused by the space's cap (or the share of it
     * searches may use) or failed by the endpoint is `fallback`: why the result is BM25 alone.
     */
    async queryVector(spaceId: string, index: SpaceIndex, query: string): Promise<{ vector: Float32Array | null; fallback?: string }> {
      // Weight 0 asks for BM25's order: no query embedded (the documents' vectors stay ready for another weight).
      if (!context.embeddings || context.embeddingsWeight === 0 || !index.vectors || index.vectors.size === 0) return { vector: null };
      // A document without a vector scores nothing by cosine: while many are missing (a first embedding
      // under way, or paused), hybrid would rank by what happens to be embedded; a few new notes, below a batch, wait for theirs.
      const documents = index.index.size;
      if (documents - index.vectors.size > EMBED_BATCH)
        return { vector: null, fallback: `BM25 alone: the space's embeddings are being computed (${index.vectors.size} of ${documents} documents)` };
      try {
        const [vector] = await meteredEmbed(context, context.embeddings, { spaceId, purpose: 'search' }, [query], EMBED_TIMEOUT_MS);
        if (vector && vector.length === index.vectors.dims) return { vector };
        return { vector: null, fallback: 'BM25 alone: the embeddings endpoint answered a vector of another dimension than the index' };
      } catch (error) {
        if (isLiveMemError(error, 'quota_exceeded')) return { vector: null, fallback: `BM25 alone: the query was not embedded, ${error.message}` };
        context.logger.debug(`query embedding failed for '${spaceId}': ${(error as Error).message}`);
        return { vector: null, fallback: 'BM25 alone: the query embedding failed (the server log says why)' };
      }
    },

    /** How far the space's embeddings are (space_info): counted only when this process holds its index (`index`). */
    progress(spaceId: string, index: SpaceIndex | undefined): EmbeddingsProgress | undefined {
      const model = context.embeddings?.label;
      if (model === undefined) return undefined;
      if (!index?.vectors) return { model, state: 'not_loaded' };
      const documents = index.index.size;
      const embedded = index.vectors.size;
      const error = errors.get(spaceId);
      const state = running.has(spaceId) ? 'embedding' : paused(spaceId) ? 'paused' : embedded >= documents ? 'ready' : 'waiting';
      return { model, state, documents, embedded, ...(error && state === 'paused' ? { error } : {}) };
    },

    /** Resolves once every run under way has ended. */
    async idle(): Promise<void> {
      await Promise.all(running.values());
    },
  };
}

export type EmbeddingScheduler = ReturnType<typeof createEmbeddingScheduler>;
