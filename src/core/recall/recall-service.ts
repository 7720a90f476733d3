import { mapLimit } from '../../shared/concurrency.js';
import { createAnalyzer } from '../../search/analyze.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { SearchHit, TextIndexEngine } from '../../search/types.js';
import { authorize, toAgentName, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import { meteredEmbed } from '../spend/meter.js';
import { requireSpace } from '../space-meta.js';
import { parseDateTime, validateCategory, validateLimit, validateQuery, validateSpaceId } from '../validate.js';
import type { Corpus, Level0Note } from '../note/corpus.js';
import { type HistoryRecord, keepsPreimages } from '../commit/history-record.js';
import { isDerivedDocId, parsePreimageDocId, summaryText, type DocMeta, type RecallSource } from './documents.js';
import { fuseScores, rescaleCosines } from './fusion.js';
import {
  type Candidate,
  lendToNeighbours,
  lendWithinSittings,
  NEIGHBOUR_LENDERS,
  NEIGHBOUR_REACH,
  NEIGHBOUR_SHARE,
  queryWords,
  RERANK_POOL,
  rerank,
  SITTING_CANDIDATES,
  SITTING_PAUSE_MS,
  SITTING_REACH,
} from './ranking.js';
import { createNeighbours, placesAround } from './neighbours.js';
import { createIndexStore } from './index-store.js';
import { snippetOf } from './snippet.js';
import { createSpaceIndex, type IndexProgress, type SpaceIndex } from './space-index.js';
import { parseRecord, type SummaryRecord } from '../derived/summary-record.js';
import type { Sources } from './sources.js';
import type { NoteRetention } from '../retention/record.js';
import type { EmbeddingsProgress } from '../../llm/embeddings.js';

export const RECALL_SOURCES: readonly RecallSource[] = ['live', 'history', 'bank', 'bank_history', 'synthesis', 'summary'];
export const MAX_SEARCH_LIMIT = 100;
/** Documents embedded per request, the characters of each sent, and how long a request may take. */
const EMBED_BATCH = 64;
const EMBED_MAX_CHARS = 8_000;
const EMBED_TIMEOUT_MS = 30_000;
/** After a failure, embeddings of a space wait this long before trying again. */
const EMBED_RETRY_MS = 60_000;

export interface MemorySearchInput {
  space_id: string;
  query: string;
  limit?: number;
  /** 0 = notes, k ≥ 1 = summaries of level k. */
  levels?: number[];
  sources?: string[];
  category?: string;
  agent?: string;
  since?: string;
  until?: string;
}

export interface RecallOptions {
  /** Progress of the index's catch-up with the store (long on a first build of a large space). */
  onProgress?: (event: IndexProgress) => void;
}

export interface RecallHit {
  score: number;
  level: number | null;
  source: RecallSource;
  ref: string;
  consolidation_id?: string;
  timestamp?: string;
  range_start?: string;
  range_end?: string;
  agent?: string;
  category?: string;
  /** Source `bank_history` (an earlier version of a bank section): see DocMeta. */
  filename?: string;
  path?: string[];
  compaction_id?: string;
  superseded_at?: string;
  note?: string;
  /** Source `bank`: the newest notes the section was written from (bank_explain gives them all, with their text). */
  sources?: string[];
  /** Source `history`: the note's consolidation did not find all its facts in the bank (core/retention): which are missing. */
  retention?: NoteRetention;
  /** The whole text when short, else a snippet around the first match. */
  text: string;
  truncated: boolean;
}

/** One entry of history_list: a consolidation (time range, notes), a compaction or a revision (pre-images). */
export interface HistoryEntry {
  consolidation_id: string;
  kind: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  time_range?: { oldest: string | null; newest: string | null };
  notes_count?: number;
  preimages_count?: number | undefined;
  bank_files: Array<{ filename: string; kind: string }>;
  by: string | undefined;
  model: string | undefined;
  /** A revision: what a person did (write, delete, rules, revert), why, and the revision it reverts; a forget: `forget`. */
  action?: string;
  reason?: string | null;
  reverts?: string;
  /** A forget: the consolidations whose notes it removed. */
  consolidations?: string[];
}

/**
 * Recall: ranked search over every level of a space (live and consolidated notes, bank sections,
 * the synthesis, summaries), and the history of consolidations. One index per space per process
 * (space-index.ts), brought up to date before each answer.
 */
/** Source notes a bank hit carries: the newest, as file names (bank_explain has the rest). */
const HIT_SOURCES = 5;

export function createRecallService(context: CoreContext, corpus: Corpus, engine: TextIndexEngine, sources: Sources) {
  const { storage } = context;
  const store = createIndexStore(context, engine);
  const analyzer = createAnalyzer({ cacheLimit: 20_000 });
  /** The indexes in memory, least recently used first (a Map keeps insertion order: a use moves one last). */
  const indexes = new Map<string, SpaceIndex>();
  /** Each index's memory estimate, taken after its last refresh or embedding batch. */
  const sizes = new Map<string, number>();
  /** Evicted indexes still writing their snapshot: a search of the space waits, then loads it. */
  const releasing = new Map<string, Promise<void>>();
  const summaryCache = new Map<string, { etag: string; doc: SummaryRecord }>();
  /**
   * Neighbours (memory_context, hits with neighbours) walk the space's timeline. Both ask right after a
   * search caught the index up: the index in memory is used as it is (catching it up again listed the
   * store a second time per answer); one not in memory is opened and caught up.
   */
  const neighbours = createNeighbours(corpus, async (spaceId) => (indexes.get(spaceId) ?? (await indexOf(spaceId))).timeline.places());

  /** The space's index, opened if it is not in memory (once its eviction's snapshot is written), now the most recently used. */
  const open = async (spaceId: string): Promise<SpaceIndex> => {
    await releasing.get(spaceId);
    let index = indexes.get(spaceId);
    if (index) indexes.delete(spaceId);
    else index = createSpaceIndex({ context, corpus, engine, store, spaceId });
    indexes.set(spaceId, index);
    return index;
  };

  /** Takes the index's memory estimate after it grew, and evicts others over the budget. */
  const account = (spaceId: string, index: SpaceIndex): void => {
    if (indexes.get(spaceId) !== index) return; // evicted meanwhile
    sizes.set(spaceId, index.bytes());
    evictOverBudget(spaceId);
  };

  const indexOf = async (spaceId: string, onProgress?: RecallOptions['onProgress']): Promise<SpaceIndex> => {
    const index = await open(spaceId);
    await index.refresh(onProgress);
    embedInBackground(spaceId, index);
    account(spaceId, index);
    return index;
  };

  /**
   * Evicts the least recently used indexes until the estimates fit LIVE_MEM_INDEX_MEMORY_MB — the
   * indexes' and the corpus's caches' (note texts, records: a quarter of the budget at most, corpus.ts),
   * which leave with their space's index: each writes a snapshot first if it holds unsaved changes, so
   * that loading it again is one read. The index just asked for stays (one space larger than the budget
   * is still searched), and so does one being refreshed or embedded (in use).
   */
  const evictOverBudget = (keep: string): void => {
    let total = corpus.bytes();
    for (const size of sizes.values()) total += size;
    for (const [spaceId, index] of indexes) {
      if (total <= context.indexMemoryBytes) break;
      if (spaceId === keep || index.busy || embedding.has(spaceId)) continue;
      indexes.delete(spaceId);
      total -= sizes.get(spaceId) ?? 0;
      sizes.delete(spaceId);
      total -= corpus.bytes(spaceId); // released with it
      const done = index
        .release()
        .catch(() => undefined) // logged by the index; the store stays the truth
        .finally(() => {
          corpus.release(spaceId);
          if (releasing.get(spaceId) === done) releasing.delete(spaceId);
        });
      releasing.set(spaceId, done);
    }
  };

  /**
   * Computes the embeddings of documents that have none, a batch at a time, in the background:
   * never on a write path, never twice at once for a space. A failing endpoint is logged once and
   * tried again a minute later; meanwhile search is BM25 alone.
   */
  const embedding = new Map<string, Promise<void>>();
  const embedPausedUntil = new Map<string, number>();
  /** Why a space's embeddings last paused (space_info). */
  const embedErrors = new Map<string, string>();
  const embedInBackground = (spaceId: string, index: SpaceIndex): void => {
    const embeddings = context.embeddings;
    if (!embeddings || embedding.has(spaceId) || (embedPausedUntil.get(spaceId) ?? 0) > Date.now()) return;
    const run = (async () => {
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
      embedErrors.delete(spaceId);
      if (indexes.get(spaceId) === index) sizes.set(spaceId, index.bytes());
    })()
      .catch((error: unknown) => {
        embedPausedUntil.set(spaceId, Date.now() + EMBED_RETRY_MS);
        embedErrors.set(spaceId, (error as Error).message);
        context.logger.warn(`embeddings of '${spaceId}' paused for a minute: ${(error as Error).message}; search is BM25 alone meanwhile`);
      })
      .finally(() => embedding.delete(spaceId));
    embedding.set(spaceId, run);
  };

  /**
   * The query's embedding, or null: BM25 alone. Without a model or vectors yet, nothing to say; a
   * search never fails for want of one, so a query refused by the space's cap (or the share of it
   * searches may use) or failed by the endpoint is `fallback`: why the result is BM25 alone.
   */
  const queryVector = async (spaceId: string, index: SpaceIndex, query: string): Promise<{ vector: Float32Array | null; fallback?: string }> => {
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
  };

  /** A summary record, read once per version. */
  const readSummary = async (spaceId: string, level: number, id: string): Promise<SummaryRecord | null> => {
    const object = await storage.get(spaceKeys(spaceId).summary(level, id));
    if (!object) return null;
    const cacheKey = `${spaceId}/${id}`;
    const cached = summaryCache.get(cacheKey);
    if (cached?.etag === object.etag) return cached.doc;
    const doc = parseRecord(object.body, { level, id });
    if (doc) summaryCache.set(cacheKey, { etag: object.etag, doc });
    return doc;
  };

  /** The full text of a document, or null when it is gone since it was indexed. */
  const textOf = async (spaceId: string, index: SpaceIndex, meta: DocMeta): Promise<string | null> => {
    switch (meta.source) {
      case 'live':
      case 'history': {
        const name = parseNoteName(meta.ref);
        if (!name) return null;
        const note0: Level0Note = { ...name, source: meta.source, ...(meta.consolidation_id ? { consolidation_id: meta.consolidation_id } : {}) };
        const [note] = await corpus.read(spaceId, [note0]);
        return note ? (note.tags.length > 0 ? `${note.content}\n[tags: ${note.tags.join(', ')}]` : note.content) : null;
      }
      case 'bank':
        return index.sectionText(meta.id) ?? null;
      case 'bank_history': {
        const preimage = parsePreimageDocId(meta.id);
        if (!preimage) return null;
        const sections = await corpus.historyPreimages(spaceId, preimage.compactionId).catch((error: unknown) => corpus.skipDamaged('recall', error, null));
        return sections?.[preimage.i]?.content ?? null;
      }
      case 'synthesis':
        return (await storage.get(spaceKeys(spaceId).synthesis))?.body.toString('utf8') ?? null;
      case 'summary': {
        const doc = await readSummary(spaceId, meta.level as number, meta.ref);
        return doc ? summaryText(doc) : null;
      }
    }
  };

  const buildFilter = (input: MemorySearchInput) => {
    const levels = input.levels && input.levels.length > 0 ? new Set(input.levels.map((level) => validateLevel(level))) : undefined;
    const sources = input.sources && input.sources.length > 0 ? new Set(input.sources.map(validateSource)) : undefined;
    const category = input.category ? validateCategory(input.category) : undefined;
    const agents = input.agent ? new Set([input.agent, toAgentName(input.agent)]) : undefined;
    const since = parseDateTime(input.since ?? '', 'since')
      ?.toISOString()
      .slice(0, 19);
    const until = parseDateTime(input.until ?? '', 'until')
      ?.toISOString()
      .slice(0, 19);
    if (!levels && !sources && !category && !agents && !since && !until) return undefined;
    return (meta: DocMeta): boolean => {
      if (levels && (meta.level === null || !levels.has(meta.level))) return false;
      if (sources && !sources.has(meta.source)) return false;
      if (category && meta.category !== category) return false;
      if (agents && (meta.agent === undefined || !agents.has(meta.agent))) return false;
      if (since || until) {
        // Second precision, as notes carry it; a summary matches when its range overlaps; an earlier
        // version of a bank section is dated by when a compaction replaced it.
        const start = (meta.timestamp ?? meta.superseded_at ?? meta.range_start)?.slice(0, 19);
        const end = (meta.timestamp ?? meta.superseded_at ?? meta.range_end)?.slice(0, 19);
        if (!start || !end) return false;
        if (since && end < since) return false;
        if (until && start > until) return false;
      }
      return true;
    };
  };

  /**
   * What recall knows of a ranking's documents beyond their words (ranking.ts), before it is cut or
   * fused: the agent field and the source prior, then the best note hits lend to the candidates around
   * them, then candidates gain from the best of their sitting. Neighbours and sittings are places in
   * the space's timeline (timeline.ts): no name is parsed, nothing is read.
   */
  const weigh = (index: SpaceIndex, found: readonly SearchHit[], words: ReadonlySet<string>): Candidate[] => {
    const places = index.timeline.places();
    let hits = rerank(
      found.map((hit) => index.candidate(hit, places)),
      words,
    );
    const lenders = NEIGHBOUR_SHARE > 0 ? hits.slice(0, NEIGHBOUR_LENDERS).filter((hit) => hit.place >= 0) : [];
    if (lenders.length > 0) {
      const byPlace = new Map(hits.filter((hit) => hit.place >= 0).map((hit) => [hit.place, hit]));
      hits = lendToNeighbours(hits, lenders, (lender) => placesAround(places, lender.place, NEIGHBOUR_REACH).flatMap((near) => byPlace.get(near) ?? []));
    }
    const sitters = hits.slice(0, SITTING_CANDIDATES).filter((hit) => hit.place >= 0);
    if (sitters.length < 2) return hits;
    const sittings = new Map(sitters.map((hit) => [hit.place, places.sittingOf(hit.place, SITTING_PAUSE_MS, SITTING_REACH)]));
    return lendWithinSittings(hits, (hit) => {
      const sitting = sittings.get(hit.place);
      return sitting === undefined || sitting < 0 ? undefined : sitting;
    });
  };

  const search = async (caller: Caller, input: MemorySearchInput, options: RecallOptions = {}) => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'read', spaceId);
    const query = validateQuery(input.query);
    const limit = validateLimit(input.limit ?? 10, MAX_SEARCH_LIMIT);
    const keep = buildFilter(input);
    await requireSpace(context, spaceId);
    const index = await indexOf(spaceId, options.onProgress);
    // Without filters nothing is asked per candidate; a document without a description is skipped below.
    const filter = keep
      ? (id: string) => {
          const meta = index.meta(id);
          return meta !== null && keep(meta);
        }
      : undefined;
    const spare = limit + 5; // a few spare for documents gone since they were indexed
    const { vector, fallback } = await queryVector(spaceId, index, query);
    const pool = Math.max(RERANK_POOL, spare);
    const words = queryWords(query);
    let hits: SearchHit[] = weigh(index, index.index.search(query, { limit: pool, ...(filter ? { filter } : {}) }), words);
    if (vector && index.vectors) {
      // Hybrid (fusion.ts): the cosine candidates as deep as BM25's and weighed the same way, their
      // cosines first put on the notes' scale, then the two fused by score, weighted to BM25.
      const cosines = index.vectors.search(vector, { limit: pool, ...(filter ? { filter } : {}) });
      const semantic = weigh(
        index,
        rescaleCosines(cosines, (id) => !isDerivedDocId(id)),
        words,
      );
      hits = fuseScores(hits, semantic, context.embeddingsWeight);
    }
    hits = hits.slice(0, spare);
    const described = hits.map((hit) => ({ hit, meta: index.meta(hit.id) }));
    // The texts of the first `limit` hits, then of spares only for those gone since they were indexed.
    const texts: Array<string | null> = [];
    for (let wanted = limit; texts.length < described.length && wanted > 0; ) {
      const batch = described.slice(texts.length, texts.length + wanted);
      const read = await mapLimit(batch, storage.parallelism, ({ meta }) => (meta ? textOf(spaceId, index, meta) : Promise.resolve(null)));
      texts.push(...read);
      wanted = read.filter((text) => text === null).length;
    }
    const results: RecallHit[] = [];
    for (const [i, { hit, meta }] of described.entries()) {
      const text = texts[i];
      if (results.length >= limit || !meta || text === null || text === undefined) continue;
      const snippet = snippetOf(text, query, analyzer);
      const { id: _id, ...fields } = meta;
      const section = meta.source === 'bank' ? index.section(meta.id) : undefined;
      const cited = section ? await sources.newestNotes(spaceId, section.file, section.path, HIT_SOURCES) : [];
      // A consolidated note whose facts the bank does not all hold says so (core/retention): its text is the only place they are.
      // The timeline keeps what the check found of those (no record read per hit).
      const retention = meta.source === 'history' && meta.consolidation_id ? index.timeline.retentionOf(meta.consolidation_id, meta.ref) : undefined;
      results.push({
        score: Math.round(hit.score * 10000) / 10000,
        ...fields,
        ...(cited.length > 0 ? { sources: cited } : {}),
        ...(retention ? { retention } : {}),
        text: snippet.text,
        truncated: snippet.truncated,
      });
    }
    return {
      status: 'ok' as const,
      space_id: spaceId,
      query,
      mode: vector ? ('hybrid' as const) : ('bm25' as const),
      ...(fallback ? { fallback } : {}),
      results,
      total: results.length,
    };
  };

  /** How far the space's embeddings are (space_info): counted only when this process holds its index. */
  const embeddingProgress = (spaceId: string): EmbeddingsProgress | undefined => {
    const model = context.embeddings?.label;
    if (model === undefined) return undefined;
    const index = indexes.get(spaceId);
    if (!index?.vectors) return { model, state: 'not_loaded' };
    const documents = index.index.size;
    const embedded = index.vectors.size;
    const error = embedErrors.get(spaceId);
    const state = embedding.has(spaceId)
      ? 'embedding'
      : (embedPausedUntil.get(spaceId) ?? 0) > Date.now()
        ? 'paused'
        : embedded >= documents
          ? 'ready'
          : 'waiting';
    return { model, state, documents, embedded, ...(error && state === 'paused' ? { error } : {}) };
  };

  /**
   * Up to `count` complete history entries, newest first, older than `before` when given: only the
   * records of the page are read (a damaged or unfinished one is passed over, as corpus.history does),
   * not every record of the space.
   */
  const historyPage = async (spaceId: string, before: string | undefined, count: number): Promise<HistoryRecord[]> => {
    const ids = await corpus.historyIds(spaceId);
    await corpus.sync(spaceId, ids);
    const newer = (before === undefined ? ids : ids.filter((cid) => cid < before)).reverse();
    const found: HistoryRecord[] = [];
    for (let at = 0; at < newer.length && found.length < count; ) {
      const batch = newer.slice(at, at + count - found.length);
      at += batch.length;
      const read = await mapLimit(batch, storage.parallelism, (cid) =>
        corpus.record(spaceId, cid).catch((error: unknown) => corpus.skipDamaged('the history', error, null)),
      );
      for (const record of read) if (record) found.push(record);
    }
    return found;
  };

  return {
    search,
    embeddingProgress,
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
      await index.saveSnapshot();
    },

    /**
     * What live_search matches of the space's live notes (space-index.ts `liveTexts`): loads only the
     * newest `.live` file into the space's index — kept, and counted in the memory budget, for a
     * later search or catch-up to go on from.
     */
    async liveTexts(spaceId: string) {
      const index = await open(spaceId);
      const lookup = await index.liveTexts();
      account(spaceId, index);
      return lookup;
    },

    /** Brings the space's index up to date if this process has one open (after a forget: it drops the notes now). */
    async refreshIfOpen(spaceId: string): Promise<void> {
      await indexes.get(spaceId)?.refresh();
    },

    /** Consolidations, newest first, `limit` at a time; `before` continues after a page's last id. */
    async historyList(caller: Caller, input: { space_id: string; limit?: number; before?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const limit = validateLimit(input.limit ?? 20, 1000);
      await requireSpace(context, spaceId);
      const page = await historyPage(spaceId, input.before, limit + 1);
      // A compaction moved no note: it says how many sections it kept the earlier text of instead.
      const consolidations = page.slice(0, limit).map(
        (record): HistoryEntry => ({
          consolidation_id: record.id,
          kind: record.kind,
          committed_at: record.committed_at,
          ...(keepsPreimages(record) ? { preimages_count: record.preimages } : { time_range: record.time_range, notes_count: record.notes.length }),
          bank_files: record.bank_files,
          by: record.revision?.by ?? (typeof record.metrics.by === 'string' ? record.metrics.by : undefined),
          model: typeof record.metrics.model === 'string' ? record.metrics.model : undefined,
          ...(record.revision
            ? {
                action: record.revision.action,
                reason: record.revision.reason,
                ...(record.revision.reverts ? { reverts: record.revision.reverts } : {}),
                ...(record.revision.secret === true ? { secret: true } : {}),
              }
            : {}),
          // A forget: how many notes, from which consolidations; never what they said.
          ...(record.forget
            ? {
                action: 'forget',
                by: record.forget.by,
                reason: record.forget.reason,
                notes_count: record.forget.notes_count,
                consolidations: record.forget.consolidations,
              }
            : {}),
        }),
      );
      const hasMore = page.length > limit;
      return {
        status: 'ok' as const,
        space_id: spaceId,
        consolidations,
        total: consolidations.length,
        has_more: hasMore,
        ...(hasMore ? { next_before: consolidations[consolidations.length - 1]?.consolidation_id } : {}),
      };
    },

    /**
     * One history entry: its record and, for a consolidation, the notes it moved out of live/, oldest
     * first; for a compaction, the sections it rewrote as they were (`preimages`). `total` counts what it holds.
     */
    async historyRead(caller: Caller, input: { space_id: string; consolidation_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const cid = typeof input.consolidation_id === 'string' ? input.consolidation_id : '';
      if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(cid)) throw invalid(`invalid consolidation_id ${JSON.stringify(cid)}`);
      await requireSpace(context, spaceId);
      await corpus.sync(spaceId); // a forget committed by another process since: its notes are not returned
      const record = await corpus.record(spaceId, cid, { fresh: true });
      if (!record) throw new LiveMemError('not_found', `no consolidation '${cid}' in space '${spaceId}'`, { space_id: spaceId, consolidation_id: cid });
      if (keepsPreimages(record)) {
        const preimages = await corpus.historyPreimages(spaceId, cid);
        return { status: 'ok' as const, space_id: spaceId, consolidation: record, notes: [], preimages, total: preimages.length };
      }
      const notes = (await corpus.historyNotes(spaceId, cid)).map(({ filename, timestamp, agent, category, tags, content }) => ({
        filename,
        timestamp,
        agent,
        category,
        tags,
        content,
      }));
      return { status: 'ok' as const, space_id: spaceId, consolidation: record, notes, preimages: [], total: notes.length };
    },

    /** Resolves once background snapshot writes have finished (a CLI process waits before it exits). */
    async idle(): Promise<void> {
      await Promise.all(embedding.values());
      await Promise.all([...indexes.values()].map((index) => index.idle()));
      await Promise.all(releasing.values());
    },

    /** The indexes in memory, least recently used first, with their estimated bytes (tests, the bench). */
    memory: (): Array<{ space_id: string; bytes: number }> => [...indexes.keys()].map((spaceId) => ({ space_id: spaceId, bytes: sizes.get(spaceId) ?? 0 })),
  };
}

export type RecallService = ReturnType<typeof createRecallService>;

function validateLevel(level: unknown): number {
  if (!Number.isInteger(level) || (level as number) < 0 || (level as number) > 6)
    throw invalid(`levels must be integers from 0 (notes) to 6, got ${JSON.stringify(level)}`);
  return level as number;
}

function validateSource(source: unknown): RecallSource {
  if (!RECALL_SOURCES.includes(source as RecallSource)) throw invalid(`unknown source ${JSON.stringify(source)}: use ${RECALL_SOURCES.join(', ')}`);
  return source as RecallSource;
}
