import { mapLimit } from '../../shared/concurrency.js';
import type { Analyzer } from '../../search/analyze.js';
import type { SearchHit } from '../../search/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { NoteRetention } from '../retention/record.js';
import { requireSpace } from '../space-meta.js';
import { validateLimit, validateQuery, validateSpaceId } from '../validate.js';
import { type DocMeta, isDerivedDocId, type RecallSource } from './documents.js';
import type { EmbeddingScheduler } from './embedding-scheduler.js';
import { fuseScores, rescaleCosines } from './fusion.js';
import type { IndexProgress } from './index-documents.js';
import { placesAround } from './neighbours.js';
import { buildFilter, type RecallFilterInput } from './query-filter.js';
import {
  answerPlaces,
  answerScore,
  type Candidate,
  lendToNeighbours,
  lendWithinSittings,
  NEIGHBOUR_LENDERS,
  NEIGHBOUR_REACH,
  NEIGHBOUR_SHARE,
  preferNamedAgents,
  queryWords,
  RERANK_POOL,
  rerank,
  SITTING_CANDIDATES,
  SITTING_PAUSE_MS,
  SITTING_REACH,
} from './ranking.js';
import { snippetOf } from './snippet.js';
import type { Anchor } from '../anchors/anchor.js';
import type { Sources } from './sources.js';
import type { SpaceIndex } from './space-index.js';

export const MAX_SEARCH_LIMIT = 100;
/** Source notes a bank hit carries: the newest, as file names (bank_explain has the rest). */
const HIT_SOURCES = 5;

export interface MemorySearchInput extends RecallFilterInput {
  space_id: string;
  query: string;
  limit?: number;
}

export interface RecallOptions {
  /** Progress of the index's catch-up with the store (long on a first build of a large space). */
  onProgress?: (event: IndexProgress) => void;
  /**
   * Only documents that hold the query's words (or their stems, prefixes, near spellings), as BM25
   * finds them: no answer turns, no vectors. What selects documents to act on (memory_forget's query)
   * rather than to read; ranked as usual among themselves.
   */
  exact?: boolean;
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
  /** Sources `live`, `history`: the code the note cites (core/anchors/). */
  anchors?: Anchor[];
  /** The whole text when short, else a snippet around the first match. */
  text: string;
  truncated: boolean;
}

/** Query words that name no agent: rerank applies the source prior alone. */
const NO_AGENT: ReadonlySet<string> = new Set();

/**
 * Which documents may join the candidates without the query's words (answer turns): none in an exact
 * search (`exact`), else those the query's filters keep (`admit`; every note without filters).
 */
export interface AnswerTurns {
  exact: boolean;
  admit: ((id: string) => boolean) | undefined;
}

/**
 * What recall knows of a ranking's documents beyond their words (ranking.ts), before it is cut or
 * fused: the source prior, then the notes written just after the best note hits of a sitting, in that
 * sitting, join the candidates (answer turns: never in an exact search, and only those the query's
 * filters admit), then the best note hits lend to the candidates around them, then candidates gain from
 * the best of their sitting, and last the agent field (preferNamedAgents): applied first, it let the
 * other agent's notes climb back by what they borrowed from the named agent's. Neighbours, answer turns and sittings are places in
 * the space's timeline (timeline.ts): no name is parsed, nothing is read.
 */
export function weigh(index: SpaceIndex, found: readonly SearchHit[], words: ReadonlySet<string>, answers: AnswerTurns): Candidate[] {
  const places = index.timeline.places();
  // The source prior first; the agent field last (preferNamedAgents), once answer turns, lending and sittings have weighed.
  let hits = rerank(
    found.map((hit) => index.candidate(hit, places)),
    NO_AGENT,
  );
  const lenders = NEIGHBOUR_SHARE > 0 ? hits.slice(0, NEIGHBOUR_LENDERS).filter((hit) => hit.place >= 0) : [];
  if (lenders.length > 0) {
    const byPlace = new Map(hits.filter((hit) => hit.place >= 0).map((hit) => [hit.place, hit]));
    const added: Candidate[] = [];
    // Only a hit of a sitting is answered: in a stream of notes without pauses (no sitting) the next note is no reply.
    const asking = answers.exact ? [] : lenders.filter((lender) => places.sittingOf(lender.place, SITTING_PAUSE_MS, SITTING_REACH) >= 0);
    const turns = asking.length > 0 ? answerPlaces(asking, places, (near) => byPlace.has(near)) : [];
    // The hits' documents by id, built at the first answer turn (none on the common path): the first hit of an id, as a scan of `found` gave it.
    let docs: Map<string, SearchHit['doc']> | undefined;
    for (const [place, lender] of turns) {
      docs ??= docsById(found);
      const near = { place: lender.place, doc: docs.get(lender.id) };
      const answer = index.answerAt(place, places, near, answerScore(lender));
      if (answer === null || (answers.admit && !answers.admit(answer.id))) continue;
      byPlace.set(place, answer);
      added.push(answer);
    }
    if (added.length > 0) hits = [...hits, ...added].sort((a, b) => b.score - a.score);
    hits = lendToNeighbours(hits, lenders, (lender) => placesAround(places, lender.place, NEIGHBOUR_REACH).flatMap((near) => byPlace.get(near) ?? []));
  }
  const sitters = hits.slice(0, SITTING_CANDIDATES).filter((hit) => hit.place >= 0);
  if (sitters.length >= 2) {
    const sittings = new Map(sitters.map((hit) => [hit.place, places.sittingOf(hit.place, SITTING_PAUSE_MS, SITTING_REACH)]));
    hits = lendWithinSittings(hits, (hit) => {
      const sitting = sittings.get(hit.place);
      return sitting === undefined || sitting < 0 ? undefined : sitting;
    });
  }
  return preferNamedAgents(hits, words);
}

/**
 * Runs `attempt` on a space's index; if the index proves damaged as it is read (CorruptIndexError), the
 * index `damaged()` names once the error is caught is dropped with its snapshot and the space's index
 * opened again (from an older snapshot, else the store), then `retry` runs once on the index reopened.
 * The sites differ only by `retry`: a search asks again, one whose attempt was the catch-up itself
 * (which reopening does) takes the index reopened as it is. Any other error is thrown.
 */
export type IndexRecovery = <T>(
  spaceId: string,
  attempt: () => T | Promise<T>,
  damaged: () => SpaceIndex | undefined,
  retry: (reopened: SpaceIndex) => T | Promise<T>,
  onProgress?: RecallOptions['onProgress'],
) => Promise<T>;

/** Each hit's engine number (SearchHit.doc) by its id; the first hit of an id wins. */
function docsById(found: readonly SearchHit[]): Map<string, SearchHit['doc']> {
  const docs = new Map<string, SearchHit['doc']>();
  for (const hit of found) if (!docs.has(hit.id)) docs.set(hit.id, hit.doc);
  return docs;
}

/** What the query pipeline uses: the index of a space caught up, embeddings, texts and provenance. */
export interface RecallQueryParts {
  context: CoreContext;
  analyzer: Analyzer;
  indexOf: (spaceId: string, onProgress?: RecallOptions['onProgress']) => Promise<SpaceIndex>;
  /** The recovery from a damaged snapshot that every reader of an index shares (recall-service.ts). */
  withIndexRecovery: IndexRecovery;
  embeddings: EmbeddingScheduler;
  textOf: (spaceId: string, index: SpaceIndex, meta: DocMeta) => Promise<string | null>;
  /** The anchors of a note a hit shows (core/anchors/): checked against the reader's checkout by whoever has one. */
  anchorsOf: (spaceId: string, meta: DocMeta) => Promise<Anchor[]>;
  sources: Sources;
}

/**
 * The ranked hits of a query, `spare` of them: BM25 weighed (weigh), fused with the cosine
 * candidates (fusion.ts) when the query has a vector — the cosines first put on the notes' scale, as
 * deep as BM25's and weighed the same way, then the two fused by score, weighted to BM25. `exact`:
 * only documents holding the query's words (BM25 alone, no answer turns).
 */
function rank(
  parts: RecallQueryParts,
  index: SpaceIndex,
  query: string,
  vector: Float32Array | null,
  spare: number,
  keep: ((meta: DocMeta) => boolean) | undefined,
  exact: boolean,
): SearchHit[] {
  // Without filters nothing is asked per candidate; a document without a description is skipped after.
  const filter = keep
    ? (id: string) => {
        const meta = index.meta(id);
        return meta !== null && keep(meta);
      }
    : undefined;
  const pool = Math.max(RERANK_POOL, spare);
  const words = queryWords(query);
  const answers: AnswerTurns = { exact, admit: filter };
  const hits: SearchHit[] = weigh(index, index.index.search(query, { limit: pool, ...(filter ? { filter } : {}) }), words, answers);
  if (!vector || !index.vectors) return hits.slice(0, spare);
  const cosines = index.vectors.search(vector, { limit: pool, ...(filter ? { filter } : {}) });
  const semantic = weigh(
    index,
    rescaleCosines(cosines, (id) => !isDerivedDocId(id)),
    words,
    answers,
  );
  return fuseScores(hits, semantic, parts.context.embeddingsWeight).slice(0, spare);
}

/** The hits as answered: the texts of the first `limit`, then of spares only for those gone since they were indexed. */
async function present(parts: RecallQueryParts, spaceId: string, index: SpaceIndex, query: string, hits: SearchHit[], limit: number): Promise<RecallHit[]> {
  const described = hits.map((hit) => ({ hit, meta: index.meta(hit.id) }));
  const texts: Array<string | null> = [];
  for (let wanted = limit; texts.length < described.length && wanted > 0; ) {
    const batch = described.slice(texts.length, texts.length + wanted);
    const read = await mapLimit(batch, parts.context.storage.parallelism, ({ meta }) => (meta ? parts.textOf(spaceId, index, meta) : Promise.resolve(null)));
    texts.push(...read);
    wanted = read.filter((text) => text === null).length;
  }
  const results: RecallHit[] = [];
  for (const [i, { hit, meta }] of described.entries()) {
    const text = texts[i];
    if (results.length >= limit || !meta || text === null || text === undefined) continue;
    const snippet = snippetOf(text, query, parts.analyzer);
    const { id: _id, ...fields } = meta;
    const section = meta.source === 'bank' ? index.section(meta.id) : undefined;
    const cited = section ? await parts.sources.newestNotes(spaceId, section.file, section.path, HIT_SOURCES) : [];
    // A consolidated note whose facts the bank does not all hold says so (core/retention): its text is the only place they are.
    // The timeline keeps what the check found of those (no record read per hit).
    const retention = meta.source === 'history' && meta.consolidation_id ? index.timeline.retentionOf(meta.consolidation_id, meta.ref) : undefined;
    const anchors = await parts.anchorsOf(spaceId, meta);
    results.push({
      score: Math.round(hit.score * 10000) / 10000,
      ...fields,
      ...(cited.length > 0 ? { sources: cited } : {}),
      ...(retention ? { retention } : {}),
      ...(anchors.length > 0 ? { anchors } : {}),
      text: snippet.text,
      truncated: snippet.truncated,
    });
  }
  return results;
}

/** memory_search: ranked search over every level of a space, its index caught up first. */
export function createRecallQuery(parts: RecallQueryParts) {
  return async (caller: Caller, input: MemorySearchInput, options: RecallOptions = {}) => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'read', spaceId);
    const query = validateQuery(input.query);
    const limit = validateLimit(input.limit ?? 10, MAX_SEARCH_LIMIT);
    const keep = buildFilter(input);
    await requireSpace(parts.context, spaceId);
    let index = await parts.indexOf(spaceId, options.onProgress);
    const exact = options.exact === true;
    const { vector, fallback } = exact ? { vector: null, fallback: undefined } : await parts.embeddings.queryVector(spaceId, index, query);
    const spare = limit + 5; // a few spare for documents gone since they were indexed
    // A part of the snapshot checked as it is first read was damaged: nothing was answered from it; asked again of the index reopened.
    const hits = await parts.withIndexRecovery(
      spaceId,
      () => rank(parts, index, query, vector, spare, keep, exact),
      () => index,
      (reopened) => {
        index = reopened;
        return rank(parts, reopened, query, vector, spare, keep, exact);
      },
      options.onProgress,
    );
    const results = await present(parts, spaceId, index, query, hits, limit);
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
}
