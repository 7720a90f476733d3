/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, 2009): merges rankings whose scores are not
 * comparable (BM25 and cosine) by rank alone. score(id) = Σ over the rankings holding id of
 * 1 / (k + rank), rank counted from 1; k = 60 is the paper's value, which damps the weight of the
 * very top ranks so that agreement between rankings counts more than one ranking's favourite.
 *
 * An id listed twice in one ranking counts once, at its best rank. Equal scores keep the order in
 * which the ids first appear, reading the rankings one after another, so the first ranking given
 * breaks ties.
 */
export function fuseRankings(rankings: string[][], k = 60): Array<{ id: string; score: number }> {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`the fusion constant k must be a finite number ≥ 0, got ${k}`);
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    const seen = new Set<string>();
    ranking.forEach((id, index) => {
      if (seen.has(id)) return;
      seen.add(id);
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1));
    });
  }
  // Array.prototype.sort is stable: equal scores stay in first-appearance (Map insertion) order.
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
