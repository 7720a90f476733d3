import type { SearchHit } from '../../search/types.js';

/**
 * Hybrid recall: the BM25 ranking and the cosine ranking, each weighed by what recall knows of its
 * documents (ranking.ts: the agent field, the source prior, neighbour lending, sittings), fused by
 * their scores: each divided by its best, then (1 − weight) × BM25 + weight × cosine.
 *
 * Why scores, weighted to BM25, and not reciprocal ranks (which this replaced; issue 30): on
 * LoCoMo's dev split BM25 with recall's weighing ranks at 0.656 recall@5 and a real sentence
 * encoder's cosine alone at about 0.35. Equal-weight RRF (k = 60) of a strong and a weak ranking
 * put BM25's first hit, when the cosine list lacked it, below documents both lists ranked about
 * 60th: 0.491 (USE-lite) and 0.515 (GloVe-SIF). Scores keep how far ahead BM25's best hits are: a
 * document the cosine ranking alone holds scores at most `weight`, so it passes only BM25 hits
 * scoring under weight / (1 − weight) of BM25's best (a quarter at 0.2).
 */

/**
 * Cosines onto [0, 1], (c − low) / (high − low), low and high taken over the reference hits only
 * (notes: derived text — bank sections, summaries — is background for vectors as it is for BM25's
 * statistics, so a summary naming everyone, close to every question, does not set the scale), or over
 * all hits when none is a reference. A cosine's level says little across models (GloVe averages sit
 * at 0.7–0.95 with each other, a sentence encoder's at 0.1–0.6): only its place in the pool counts.
 * Clamped: a derived document above the best note scores 1.
 */
export function rescaleCosines(hits: readonly SearchHit[], isReference: (id: string) => boolean): SearchHit[] {
  const reference = hits.filter((hit) => isReference(hit.id));
  const scale = reference.length > 0 ? reference : hits;
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const hit of scale) {
    low = Math.min(low, hit.score);
    high = Math.max(high, hit.score);
  }
  const span = high - low;
  return hits.map((hit) => ({ id: hit.id, score: span > 0 ? Math.min(1, Math.max(0, (hit.score - low) / span)) : 1 }));
}

/**
 * (1 − weight) × lexical / its best + weight × semantic / its best, over the union of the two lists
 * (a document missing from one scores 0 there), best first. Both lists must hold scores ≥ 0. Equal
 * scores keep the order of first appearance, the lexical list read first, so BM25 breaks ties.
 */
export function fuseScores(lexical: readonly SearchHit[], semantic: readonly SearchHit[], weight: number): SearchHit[] {
  if (!(weight >= 0 && weight <= 1)) throw new RangeError(`the embeddings weight must be from 0 to 1, got ${weight}`);
  const scores = new Map<string, number>();
  const add = (hits: readonly SearchHit[], share: number) => {
    const best = hits.reduce((max, hit) => Math.max(max, hit.score), 0);
    for (const hit of hits) scores.set(hit.id, (scores.get(hit.id) ?? 0) + (best > 0 ? (share * Math.max(0, hit.score)) / best : 0));
  };
  for (const hit of lexical) scores.set(hit.id, 0);
  for (const hit of semantic) if (!scores.has(hit.id)) scores.set(hit.id, 0);
  add(lexical, 1 - weight);
  add(semantic, weight);
  // Array.prototype.sort is stable: equal scores stay in first-appearance (Map insertion) order.
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
