import { fold, tokenize } from '../../search/analyze.js';
import type { SearchHit } from '../../search/types.js';
import type { RecallSource } from './documents.js';
import type { Places } from './timeline.js';

/**
 * What recall knows about a document beyond its words, applied to the engine's candidates: who wrote
 * a note, and whether a document is a note or text derived from notes. Both are multiplicative, so
 * they need no knowledge of the engine's score scale and work the same on BM25 scores and cosines.
 *
 * Measured on LoCoMo (bench section 21, dev split; docs/recall.md has the table):
 * - the agent as a field: a note whose agent a query word names counts double. Questions name the
 *   person whose notes hold the answer ("What did Melanie paint?"), while the name as text mostly
 *   matches the other person's notes ("Thanks, Melanie!"), since nobody writes their own name.
 *   recall@5 0.551 → 0.604 (with b = 0.3); applied last (preferNamedAgents), 0.678 → 0.691;
 * - a source prior: bank sections, summaries, the synthesis and earlier bank text count half, so text
 *   derived from many notes (and naming everyone in them) does not crowd out the note that answers;
 *   after a consolidation they took 476 of 3,810 top-5 places, now 3, and recall@5 no longer drops.
 */

/**
 * A note by an agent a query word names: its score times (1 + this), applied last (preferNamedAgents),
 * after answer turns, lending and sittings. Applied first, as it was, the other agent's notes borrowed
 * from the named agent's boosted scores (the reply after a hit, a neighbour, a note of its sitting) and
 * held 22 % of the top 5 of LoCoMo's dev questions naming one speaker (now 8 %), whose evidence that
 * speaker wrote 96 % of. LoCoMo dev recall@5, BM25 / GloVe-SIF hybrid: 0.678 / 0.687 → 0.691 / 0.698
 * (multi-hop 0.319 / 0.364 → 0.344 / 0.384); ×1.7 / ×2.5 last: 0.691 / 0.688 (BM25); ×2 first and again
 * ×1.43 last: 0.694 / 0.693; ×1.5 / ×3 / ×5 first only: 0.673 / 0.668 / 0.671 (BM25).
 */
export const AGENT_BOOST = 1;
/** Bank sections, summaries, the synthesis and pre-images: their score times this. */
export const DERIVED_PRIOR = 0.5;
/**
 * Candidates the engine returns for re-ranking: a note by the named agent may sit below notes by
 * others that use the name. LoCoMo dev recall@5, with sittings grouping the candidates by their times
 * (as they first did): 0.631 / 0.637 / 0.639 / 0.643 / 0.643 at 30 / 50 / 100 / 200 / 400.
 */
export const RERANK_POOL = 200;

/**
 * The best note hits that lend a share of their score to the candidates written just before and after
 * them (NEIGHBOUR_REACH on each side), and that share: the answer to a question turn is the next turn,
 * or the one after, which often shares only a word with the question. LoCoMo dev recall@5 0.604 →
 * 0.626 with ±1 (0.35: 0.625; 0.5: 0.613; lending to every neighbour, candidate or not, measured the
 * same); with sittings, 0.643 at ±1, 0.654 at ±2 (1 before and 2 after: 0.654; ±2 and 3 after: 0.656;
 * 20 lenders: 0.653), the reach memory_context shows around a hit.
 */
export const NEIGHBOUR_LENDERS = 10;
export const NEIGHBOUR_SHARE = 0.2;
export const NEIGHBOUR_REACH = 2;

/**
 * Answer turns: the notes written just after one of the best note hits (NEIGHBOUR_LENDERS) that is in
 * a sitting, up to ANSWER_REACH of them and in that sitting (no pause over SITTING_PAUSE_MS on the way;
 * a stream of notes without pauses is no sitting, and its next note no reply), join the
 * candidates even when they hold none of the query's words, at ANSWER_SHARE of the best such hit's
 * score (then lending and sittings weigh them like the rest). A question names what the turn asking it
 * names ("How long have you been married?"), not what the reply says ("5 years already!"): lending
 * alone reached only candidates. Never in an exact search (memory_forget's), never past a filter.
 * LoCoMo dev recall@5, BM25 alone / with GloVe-SIF vectors (weight 0.2), from 0.656 / 0.662: 0.678 /
 * 0.687 at 0.2; 0.679 / 0.683 at 0.25; 0.682 / 0.683 at 0.3, where multi-hop with vectors fell 0.367 →
 * 0.350 (lists gathered over sittings: the replies of the best sitting crowd out the others). Earlier,
 * BM25 alone: 1 after at 0.2 / 0.4 / 0.6: 0.670 / 0.662 / 0.663; 2 after at 0.4: 0.672; 3 after at
 * 0.3: 0.681; 5 or 20 hits lending instead of 10: 0.680 / 0.682; only notes by another agent: 0.667; a
 * larger share after a hit that asks ("?", 10 texts read a query): 0.661–0.675.
 */
export const ANSWER_REACH = 2;
export const ANSWER_SHARE = 0.2;

/**
 * Sittings: the notes around a note written with no pause longer than SITTING_PAUSE_MS from one to the
 * next, bounded by pauses and at most SITTING_REACH notes long — a conversation, a stretch of work on one
 * thing (timeline.ts `Places.sittingOf`; a longer stream without a pause mixes every subject, and is none). A
 * question about one thing draws several notes of its sitting: each candidate note gains SITTING_SHARE of
 * the best score among the other candidates of its sitting, so the note of the sitting a question is about
 * comes before a note of another that shares as many words. LoCoMo dev recall@5 0.626 → 0.643 (with
 * RERANK_POOL 200; 0.1: 0.635, 0.3: 0.640; the sum of the others' scores instead of the best, at
 * 0.02–0.05: 0.628–0.631; a pause of 5 or 120 minutes measured the same). Grouping the candidates by their
 * own times instead (any within 30 minutes of the next) lost the synthetic project history of bench
 * section 8 two questions: its days are streams of 90 notes 20 seconds apart, where candidates an hour
 * apart fell into groups by chance.
 */
export const SITTING_PAUSE_MS = 30 * 60_000;
export const SITTING_SHARE = 0.2;
export const SITTING_REACH = 64;
/**
 * The best candidates whose sittings are looked for (the others gain nothing). When finding one read the
 * record of each consolidation its walk met, looking for all 200 made a warm search of a 100,000-note
 * space take 18 ms instead of 7 (a new process's first, 407 ms instead of 127); walks now run over the
 * timeline in memory and are remembered, and the measurements below still choose 20. LoCoMo dev recall@5 / memory_context evidence at 20, 30, 50, 100 and 200: 0.656 / 0.885,
 * 0.654 / 0.882, 0.654 / 0.883, 0.654 / 0.885, 0.654 / 0.885.
 */
export const SITTING_CANDIDATES = 20;

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

/** Whether a source is text derived from notes (DERIVED_PRIOR). */
export const isDerivedSource = (source: RecallSource): boolean => DERIVED.has(source);

/** How much a candidate's score is multiplied by, from what it is and the query's words. */
export function rankFactor(candidate: Pick<Candidate, 'agent' | 'derived'>, words: ReadonlySet<string>): number {
  if (candidate.derived) return DERIVED_PRIOR;
  return candidate.agent !== undefined && namesAgent(candidate.agent, words) ? 1 + AGENT_BOOST : 1;
}

/**
 * A candidate as recall weighs it: the engine's hit, who wrote it (a note), whether it is text derived
 * from notes, and for a note its place in the space's timeline (timeline.ts; -1 for anything else, or
 * a note not placed). Each step below returns new candidates, best first, and never changes the ones
 * it is given.
 */
export interface Candidate extends SearchHit {
  agent: string | undefined;
  derived: boolean;
  place: number;
}

const bestFirst = (a: SearchHit, b: SearchHit): number => b.score - a.score;

/**
 * The candidates re-scored by rankFactor, best first (a stable sort: equal scores keep the engine's
 * order). A negative score (a cosine) is divided instead, so a boost always moves a hit up.
 */
export function rerank(hits: readonly Candidate[], words: ReadonlySet<string>): Candidate[] {
  // A note's factor depends on its agent alone: worked out once per agent (a pool of 200 has a few).
  const byAgent = new Map<string, number>();
  const factorOf = (hit: Candidate): number => {
    if (hit.agent === undefined || hit.derived) return rankFactor(hit, words);
    let factor = byAgent.get(hit.agent);
    if (factor === undefined) byAgent.set(hit.agent, (factor = rankFactor(hit, words)));
    return factor;
  };
  return hits
    .map((hit) => {
      const factor = factorOf(hit);
      return { id: hit.id, score: hit.score >= 0 ? hit.score * factor : hit.score / factor, agent: hit.agent, derived: hit.derived, place: hit.place };
    })
    .sort(bestFirst);
}

/**
 * An agent a query names after another (the object: "What did Caroline give Melanie?"): its notes' score
 * times (1 + this) instead. LoCoMo dev recall@5, BM25: 0.691 → 0.699 (the 67 questions naming both
 * speakers; ×1 for the second: 0.697).
 */
export const SECOND_AGENT_BOOST = 0.5;

/**
 * The agent field, applied last (after answer turns, lending and sittings): a note whose agent a query
 * word names, its score times (1 + AGENT_BOOST) for the agent named first in the query (the words in the
 * query's order, as queryWords keeps them), (1 + SECOND_AGENT_BOOST) for any other named; a negative
 * score (a cosine) divided. Best first; a query that names no agent of the hits gets them back as they
 * were.
 */
export function preferNamedAgents<T extends Candidate>(hits: readonly T[], words: ReadonlySet<string>): T[] {
  // Each agent of the hits: the position in the query of the word naming it, or -1 (a few agents a pool).
  const order = new Map<string, number>();
  let first = Number.POSITIVE_INFINITY;
  for (const hit of hits) {
    if (hit.agent === undefined || hit.derived || order.has(hit.agent)) continue;
    const position = nameAt(hit.agent, words);
    order.set(hit.agent, position);
    if (position >= 0 && position < first) first = position;
  }
  if (first === Number.POSITIVE_INFINITY) return hits.slice();
  return hits
    .map((hit) => {
      const position = hit.agent === undefined || hit.derived ? -1 : (order.get(hit.agent) ?? -1);
      if (position < 0) return hit;
      const factor = 1 + (position === first ? AGENT_BOOST : SECOND_AGENT_BOOST);
      return { ...hit, score: hit.score >= 0 ? hit.score * factor : hit.score / factor };
    })
    .sort(bestFirst);
}

/** Where among the query's words (in order) the agent is named (namesAgent), or -1. */
function nameAt(agent: string, words: ReadonlySet<string>): number {
  const first = fold(agent.split(NAME_PARTS)[0] ?? '');
  if (first.length < 2 || !words.has(first)) return -1;
  let position = 0;
  for (const word of words) {
    if (word === first) return position;
    position++;
  }
  return -1;
}

/**
 * Conversation context: each lender (one of the best note hits) adds NEIGHBOUR_SHARE of its score to
 * its neighbours (`neighboursOf`: the candidates written just before and after it) — a note holding
 * none of the query's words is no candidate, and never becomes a hit. Best first.
 */
export function lendToNeighbours<T extends SearchHit>(hits: readonly T[], lenders: readonly T[], neighboursOf: (lender: T) => Iterable<T>): T[] {
  const scores = new Map<T, number>();
  for (const lender of lenders) {
    const share = NEIGHBOUR_SHARE * Math.max(0, lender.score);
    for (const near of neighboursOf(lender)) scores.set(near, (scores.get(near) ?? near.score) + share);
  }
  if (scores.size === 0) return hits.slice();
  return hits
    .map((hit) => {
      const score = scores.get(hit);
      return score === undefined ? hit : { ...hit, score };
    })
    .sort(bestFirst);
}

/**
 * Sittings (SITTING_PAUSE_MS): each hit with a sitting (`sittingOf`, any key naming it; none for what
 * is not a note, or a note of no sitting) gains SITTING_SHARE of the best score among the other hits of
 * its sitting. Best first.
 */
export function lendWithinSittings<T extends SearchHit>(hits: readonly T[], sittingOf: (hit: T) => string | number | undefined): T[] {
  const sittings = hits.map(sittingOf);
  const best = new Map<string | number, [first: number, second: number]>();
  for (const [i, hit] of hits.entries()) {
    const sitting = sittings[i];
    if (sitting === undefined) continue;
    const score = Math.max(0, hit.score);
    const top = best.get(sitting) ?? [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
    if (score > top[0]) best.set(sitting, [score, top[0]]);
    else if (score > top[1]) best.set(sitting, [top[0], score]);
    else best.set(sitting, top);
  }
  return hits
    .map((hit, i) => {
      const sitting = sittings[i];
      const top = sitting === undefined ? undefined : best.get(sitting);
      if (!top || top[1] === Number.NEGATIVE_INFINITY) return hit; // alone in its sitting
      // The best of the others: the second best for the best, else the best.
      return { ...hit, score: hit.score + SITTING_SHARE * (Math.max(0, hit.score) === top[0] ? top[1] : top[0]) };
    })
    .sort(bestFirst);
}

/**
 * Answer turns (ANSWER_REACH): the places just after each lender that are no candidate (`isCandidate`)
 * and that follow it with no pause longer than SITTING_PAUSE_MS from one note to the next — a reply is
 * written in the sitting of what it answers, and the note written a month after a hit answers nothing
 * of it —, each with the lender that reaches it with the best score (it scores ANSWER_SHARE of that
 * lender's, `answerScore`).
 */
export function answerPlaces<T extends Candidate>(
  lenders: readonly T[],
  places: Pick<Places, 'size' | 'secondsAt'>,
  isCandidate: (place: number) => boolean,
): Map<number, T> {
  const best = new Map<number, T>();
  for (const lender of lenders) {
    const end = Math.min(lender.place + ANSWER_REACH, places.size - 1);
    for (let place = lender.place + 1, before = places.secondsAt(lender.place); place <= end; place++) {
      const seconds = places.secondsAt(place);
      if ((seconds - before) * 1000 > SITTING_PAUSE_MS) break;
      before = seconds;
      const other = best.get(place);
      if (!isCandidate(place) && (other === undefined || lender.score > other.score)) best.set(place, lender);
    }
  }
  return best;
}

/** An answer turn's score, from the lender that reached it (answerPlaces). */
export const answerScore = (lender: SearchHit): number => ANSWER_SHARE * Math.max(0, lender.score);
