/**
 * The best `limit` documents of a scored set, best first: a bounded min-heap, so ranking 50,000
 * matches for a limit of 10 costs a pass and a few comparisons rather than a full sort.
 * Ties go to the smaller id so that equal scores come out in the same order on every run.
 */
export function topK(docs: readonly number[], scores: Float64Array, idOf: (doc: number) => string, limit: number): number[] {
  const better = (a: number, b: number): boolean => {
    const sa = scores[a] as number;
    const sb = scores[b] as number;
    return sa > sb || (sa === sb && idOf(a) < idOf(b));
  };
  if (limit <= 0) return [];
  if (docs.length <= limit) return [...docs].sort((a, b) => (better(a, b) ? -1 : 1));

  // heap[0] is the worst of the kept documents.
  const heap = docs.slice(0, limit);
  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) return;
      const right = left + 1;
      let worst = left;
      if (right < heap.length && better(heap[left] as number, heap[right] as number)) worst = right;
      if (!better(heap[i] as number, heap[worst] as number)) return;
      [heap[i], heap[worst]] = [heap[worst] as number, heap[i] as number];
      i = worst;
    }
  };
  for (let i = (heap.length >>> 1) - 1; i >= 0; i--) siftDown(i);
  for (let k = limit; k < docs.length; k++) {
    const doc = docs[k] as number;
    if (better(doc, heap[0] as number)) {
      heap[0] = doc;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}
