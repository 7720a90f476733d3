import { fold, tokenize } from '../../search/analyze.js';
import type { SearchHit } from '../../search/types.js';
import type { DocMeta, RecallSource } from './documents.js';

/**
 * What recall knows about a document beyond its words, applied to the engine's candidates: who wrote
 * a note, and whether a document is a note or text derived from notes. Both are multiplicative, so
 * they need no knowledge of the engine's score scale and work the same on BM25 scores and cosines.
 *
 * Measured on LoCoMo (bench section 21, dev split; docs/recall.md has the table):
 * - the agent as a field: a note whose agent a query word names counts double. Questions name the
 *   person whose notes hold the answer ("What did Melanie paint?"), while the name as text mostly
 *   matches the other person's notes ("Thanks, Melanie!"), since nobody writes their own name.
 *   recall@5 0.551 → 0.604 (with b = 0.3);
 * - a source prior: bank sections, summaries, the synthesis and earlier bank text count half, so text
 *   derived from many notes (and naming everyone in them) does not crowd out the note that answers;
 *   after a consolidation they took 476 of 3,810 top-5 places, now 3, and recall@5 no longer drops.
 */

/** A note by an agent a query word names: its score times (1 + this). */
export const AGENT_BOOST = 1;
/** Bank sections, summaries, the synthesis and pre-images: their score times this. */
export const DERIVED_PRIOR = 0.5;
/**
 * Candidates the engine returns for re-ranking: a note by the named agent may sit below notes by
 * others that use the name. 20 lost 0.008 of recall@10; 100 gained nothing over 50.
 */
export const RERANK_POOL = 50;

/**
 * The best note hits that lend a share of their score to the candidates written just before and after
 * them, and that share: the answer to a question turn is the next turn, which often shares only a word
 * with the question. LoCoMo dev recall@5 0.604 → 0.626 (0.35: 0.625; 0.5: 0.613); lending to every
 * neighbour, candidate or not, measured the same.
 */
export const NEIGHBOUR_LENDERS = 10;
export const NEIGHBOUR_SHARE = 0.2;

const DERIVED: ReadonlySet<RecallSource> = new Set(['bank', 'bank_history', 'synthesis', 'summary']);
const NAME_PARTS = /[-._]+/;

/** The query's words as the agent field compares them: folded, whole (no stemming: names are not inflected). */
export function queryWords(query: string): ReadonlySet<string> {
  return new Set(tokenize(query).map(({ token }) => fold(token)));
}

/**
 * Whether a query word names the agent: its name up to the first "-", "." or "_", folded ("claude"
 * names claude-code, "john" names john.smith, "zoe" names Zoé). Only the first part: a later one is
 * often a common word ("code") that a question uses for itself.
 */
export function namesAgent(agent: string, words: ReadonlySet<string>): boolean {
  const first = fold(agent.split(NAME_PARTS)[0] ?? '');
  return first.length >= 2 && words.has(first);
}

/** How much a document's score is multiplied by, from its description and the query's words. */
export function rankFactor(meta: DocMeta | null, words: ReadonlySet<string>): number {
  if (!meta) return 1;
  if (DERIVED.has(meta.source)) return DERIVED_PRIOR;
  return meta.agent !== undefined && namesAgent(meta.agent, words) ? 1 + AGENT_BOOST : 1;
}

/**
 * The hits re-scored by rankFactor, best first (a stable sort: equal scores keep the engine's
 * order). A negative score (a cosine) is divided instead, so a boost always moves a hit up.
 */
export function rerank(hits: readonly SearchHit[], metaOf: (id: string) => DocMeta | null, words: ReadonlySet<string>): SearchHit[] {
  return hits
    .map((hit) => {
      const factor = rankFactor(metaOf(hit.id), words);
      return { id: hit.id, score: hit.score >= 0 ? hit.score * factor : hit.score / factor };
    })
    .sort((a, b) => b.score - a.score);
}

/**
 * Conversation context: each lender (one of the best note hits) adds NEIGHBOUR_SHARE of its score to
 * its neighbours (`neighboursOf`: the ids of the notes written just before and after it) that are
 * candidates already — a note holding none of the query's words never becomes a hit. Best first.
 */
export function lendToNeighbours(hits: readonly SearchHit[], lenders: readonly SearchHit[], neighboursOf: (id: string) => readonly string[]): SearchHit[] {
  const scores = new Map(hits.map((hit) => [hit.id, hit.score]));
  for (const lender of lenders)
    for (const id of neighboursOf(lender.id)) {
      const score = scores.get(id);
      if (score !== undefined) scores.set(id, score + NEIGHBOUR_SHARE * Math.max(0, lender.score));
    }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
