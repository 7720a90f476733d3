/**
 * Scoring a planned query (bm25-query.ts) over an index's postings: the best `limit` documents
 * without scoring every posting, and without an array the size of the index per query.
 *
 * MaxScore (Turtle & Flood 1995; the way Lucene's MaxScoreBulkScorer and PISA run disjunctions),
 * over the query's words: each word has an upper bound, the most any document can get from it. Once
 * `limit` documents are kept, the k-th best score is a threshold: the words whose bounds, added up
 * from the smallest, stay under it are *non-essential* — a document holding only those cannot rank —
 * so documents are only taken from the other, *essential* words' postings, and the non-essential
 * words are looked up for those documents alone, best bound first, until what is left to gain
 * cannot lift a document to the threshold. The bigger the threshold grows, the more words become
 * non-essential: a rare word's few postings end up driving the search, a common word's many are
 * skipped past.
 *
 * Documents are visited in windows of WINDOW numbers (fewer in a small index): each essential word's postings in the window
 * are added into a per-word array of the window's size (the best of a word's terms, as the
 * exhaustive scorer keeps), then each document touched is weighed. Memory is the window's, whatever
 * the index's size.
 *
 * Exact: it returns what scoring every posting then sorting would (`scoreAll`, kept as the
 * reference), to the bit — a document's score is always summed over the words in the query's order,
 * as the exhaustive scorer sums it, and ties go to the smaller id. Bounds only decide what is
 * skipped, with a margin so that floating-point rounding never skips a document that could rank.
 */
import { END, type PostingCursor } from './bm25-cursor.js';
import { B, K1, type QueryTerm } from './bm25-query.js';

export { END, PostingCursor } from './bm25-cursor.js';

/** Documents weighed together: per word, this many 8-byte slots (32 KB), reused window after window. */
const WINDOW = 4096;

/** Bounds are compared with this relative margin, far above the rounding of a sum of a few dozen terms. */
const MARGIN = 1e-9;

/** A term of a query word as the scorer reads it. */
export interface ScoredTerm extends QueryTerm {
  cursor: PostingCursor;
  /**
   * The most any of its postings can score per unit of `weight * idf`, given the average length:
   * bm25's term-frequency part at its largest term frequency and its shortest document.
   */
  bound(averageLength: number): number;
}

/** What the scorers read of the index, besides the query's terms. */
export interface Collection {
  /** Documents numbered, removed ones included. */
  count: number;
  /** 1 for a removed document, by number (its capacity may run past `count`). */
  removed: Uint8Array;
  /** A live document's id: asked only of what a filter asks, since the index may keep ids as bytes. */
  idOf(doc: number): string;
  /** Whether a live document's id sorts before another's (ties go to the smaller id), told without making either a string. */
  idBefore(a: number, b: number): boolean;
  lengths: Uint32Array;
  averageLength: number;
  filter: ((id: string) => boolean) | undefined;
  /** The index's scratch memory, reused from search to search. */
  scratch: Scratch;
}

/**
 * The window's arrays, kept by an index and reused by each of its searches (allocating and zeroing
 * them per query cost more than scoring a small index): all zero between searches.
 */
export class Scratch {
  windows: Float64Array[] = [];
  touched = new Int32Array(0);
  marked = new Uint8Array(0);
  /** Set while a search runs: one that threw (a filter did) left them dirty, and the next clears them. */
  private busy = false;

  /** The arrays for `words` words, in windows of `span` documents, zeroed. */
  take(words: number, span: number): this {
    if (this.busy || this.marked.length !== span) {
      this.windows = [];
      this.touched = new Int32Array(span);
      this.marked = new Uint8Array(span);
    }
    while (this.windows.length < words) this.windows.push(new Float64Array(span));
    this.busy = true;
    return this;
  }

  release(): void {
    this.busy = false;
  }

  bytes(): number {
    return this.windows.length * this.marked.length * 8 + this.touched.byteLength + this.marked.byteLength;
  }
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

/** bm25's term-frequency part, times `factor` (weight * idf): the one expression both scorers use, so they agree to the bit. */
const termScore = (factor: number, tf: number, length: number, averageLength: number): number =>
  (factor * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / averageLength));

/** The term-frequency part at its largest: `tf` as large and the document as short as any posting has. */
export const tfBound = (maxTf: number, minLength: number, averageLength: number): number => termScore(1, maxTf, minLength, averageLength);

/**
 * The best `limit` documents, best first (ties: the smaller id first), by MaxScore over `words` (each
 * a list of alternative terms: a document scores the best of them). Every cursor must be fresh.
 */
export function scoreTopK(words: readonly (readonly ScoredTerm[])[], collection: Collection, limit: number): ScoredDoc[] {
  const { removed, idOf, idBefore, lengths, averageLength, filter } = collection;
  // A small index is one window, the size of a power of two above its documents.
  const span = Math.min(WINDOW, 2 ** Math.ceil(Math.log2(Math.max(64, collection.count))));
  const count = words.length;
  const heap = new TopK(limit, idBefore);
  for (const word of words) for (const term of word) term.cursor.next();

  // Bounds, worked out when the threshold first exists (a search that never fills `limit` needs none).
  let wordBounds: Float64Array | undefined;
  /** Words by bound, smallest first, and how many of them are non-essential now. */
  let byBound: Int32Array | undefined;
  let nonEssential = 0;
  const essential = new Uint8Array(count).fill(1);
  const repartition = (): void => {
    if (!heap.full) return;
    if (wordBounds === undefined) {
      wordBounds = new Float64Array(count);
      for (let w = 0; w < count; w++) {
        let best = 0;
        for (const term of words[w] as readonly ScoredTerm[]) best = Math.max(best, term.weight * term.idf * term.bound(averageLength));
        wordBounds[w] = best * (1 + MARGIN);
      }
      const bounds = wordBounds;
      byBound = Int32Array.from({ length: count }, (_, w) => w).sort((a, b) => (bounds[a] as number) - (bounds[b] as number));
    }
    const threshold = heap.threshold;
    let sum = 0;
    nonEssential = 0;
    for (; nonEssential < count; nonEssential++) {
      sum += wordBounds[(byBound as Int32Array)[nonEssential] as number] as number;
      if (sum * (1 + MARGIN) >= threshold) break;
    }
  };

  const { windows, touched, marked } = collection.scratch.take(count, span);
  const contribution = new Float64Array(count);

  for (let start = 0; ; ) {
    // The partition holds for the whole window: its essential words are the ones added up below,
    // the `skipped` smallest bounds are looked up per document.
    const skipped = nonEssential;
    for (let w = 0; w < count; w++) essential[w] = 1;
    for (let i = 0; i < skipped; i++) essential[(byBound as Int32Array)[i] as number] = 0;
    let next = END;
    for (let w = 0; w < count; w++) {
      if (essential[w] === 0) continue;
      for (const term of words[w] as readonly ScoredTerm[]) if (term.cursor.doc < next) next = term.cursor.doc;
    }
    if (next === END) break; // what only non-essential words hold cannot rank
    if (next >= start + span) start = next - (next % span);
    const end = start + span;

    let found = 0;
    let ordered = true; // touched in ascending order so far (one term's postings are)
    for (let w = 0; w < count; w++) {
      if (essential[w] === 0) continue;
      const window = windows[w] as Float64Array;
      for (const term of words[w] as readonly ScoredTerm[]) {
        const cursor = term.cursor;
        const factor = term.weight * term.idf;
        for (let doc = cursor.doc; doc < end; doc = cursor.next()) {
          const s = termScore(factor, cursor.tf, lengths[doc] as number, averageLength);
          const slot = doc - start;
          if (s > (window[slot] as number)) window[slot] = s;
          if (marked[slot] === 0) {
            marked[slot] = 1;
            if (found > 0 && slot < (touched[found - 1] as number)) ordered = false;
            touched[found++] = slot;
          }
        }
      }
    }
    // Documents are weighed in order (cursors only move forwards): a dense window is read off its
    // marks, a sparse one sorted.
    if (!ordered) {
      if (found * 16 > span) {
        for (let slot = 0, i = 0; i < found; slot++) if (marked[slot] === 1) touched[i++] = slot;
      } else touched.subarray(0, found).sort();
    }
    // What the non-essential words may add at most: the same for every document of the window.
    let skippedBound = 0;
    for (let k = 0; k < skipped; k++) skippedBound += (wordBounds as Float64Array)[(byBound as Int32Array)[k] as number] as number;

    for (let i = 0; i < found; i++) {
      const slot = touched[i] as number;
      const doc = start + slot;
      if (removed[doc] === 1) continue;
      if (heap.full) {
        const threshold = heap.threshold;
        let bound = skippedBound;
        for (let w = 0; w < count; w++) if (essential[w] === 1) bound += (windows[w] as Float64Array)[slot] as number;
        if (bound * (1 + MARGIN) < threshold) continue;
        // The non-essential words, best bound first, while the document may still rank.
        let pruned = false;
        for (let k = skipped - 1; k >= 0; k--) {
          const w = (byBound as Int32Array)[k] as number;
          const c = bestAt(words[w] as readonly ScoredTerm[], doc, lengths[doc] as number, averageLength);
          contribution[w] = c;
          bound += c - ((wordBounds as Float64Array)[w] as number);
          if (bound * (1 + MARGIN) < threshold) {
            pruned = true;
            break;
          }
        }
        if (pruned) continue;
      }
      // The exhaustive scorer's sum, word by word in the query's order.
      let score = 0;
      for (let w = 0; w < count; w++) score += essential[w] === 1 ? ((windows[w] as Float64Array)[slot] as number) : (contribution[w] as number);
      if (!heap.admits(doc, score)) continue;
      if (filter !== undefined && !filter(idOf(doc))) continue;
      heap.push(doc, score);
      if (heap.full) repartition(); // the threshold rose: more words may be non-essential from the next window
    }
    for (let i = 0; i < found; i++) {
      const slot = touched[i] as number;
      marked[slot] = 0;
      for (let w = 0; w < count; w++) (windows[w] as Float64Array)[slot] = 0;
    }
    start = end;
  }
  collection.scratch.release();
  return heap.sorted();
}

/** The best score of a word's terms at `doc` (0 when it holds none), each cursor moved up to it. */
function bestAt(terms: readonly ScoredTerm[], doc: number, length: number, averageLength: number): number {
  let best = 0;
  for (const term of terms) {
    const cursor = term.cursor;
    if (cursor.doc < doc) cursor.advance(doc);
    if (cursor.doc !== doc) continue;
    const s = termScore(term.weight * term.idf, cursor.tf, length, averageLength);
    if (s > best) best = s;
  }
  return best;
}

/**
 * Scores every posting of every term: a per-document array of totals, then the best `limit`. The
 * reference scoreTopK is tested against (and what it must answer to the bit); not used to search.
 */
export function scoreAll(words: readonly (readonly ScoredTerm[])[], collection: Collection, limit: number): ScoredDoc[] {
  const { removed, idOf, idBefore, lengths, averageLength, filter } = collection;
  const scores = new Float64Array(collection.count);
  const best = new Float64Array(collection.count);
  const hits: number[] = [];
  for (const word of words) {
    const touched: number[] = [];
    for (const term of word) {
      const cursor = term.cursor;
      const factor = term.weight * term.idf;
      for (let doc = cursor.next(); doc !== END; doc = cursor.next()) {
        if (removed[doc] === 1 || (filter !== undefined && !filter(idOf(doc)))) continue;
        const s = termScore(factor, cursor.tf, lengths[doc] as number, averageLength);
        if (best[doc] === 0) touched.push(doc);
        if (s > (best[doc] as number)) best[doc] = s;
      }
    }
    for (const doc of touched) {
      if (scores[doc] === 0) hits.push(doc);
      scores[doc] = (scores[doc] as number) + (best[doc] as number);
      best[doc] = 0;
    }
  }
  const heap = new TopK(limit, idBefore);
  for (const doc of hits) if (heap.admits(doc, scores[doc] as number)) heap.push(doc, scores[doc] as number);
  return heap.sorted();
}

/**
 * The best `limit` documents seen: a binary heap whose root is the worst kept (lowest score, then
 * the larger id), so a document is admitted by one comparison with it once `limit` are kept.
 */
class TopK {
  private readonly docs: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(
    private readonly limit: number,
    private readonly idBefore: (a: number, b: number) => boolean,
  ) {
    this.docs = new Int32Array(Math.max(1, limit));
    this.scores = new Float64Array(Math.max(1, limit));
  }

  get full(): boolean {
    return this.size >= this.limit;
  }

  /** The worst kept score: a document below it cannot be admitted (one equal to it may, by id). */
  get threshold(): number {
    return this.scores[0] as number;
  }

  /** Whether a document of this score would be kept. */
  admits(doc: number, score: number): boolean {
    return this.size < this.limit || this.better(doc, score, this.docs[0] as number, this.scores[0] as number);
  }

  /** Adds a document `admits` accepted, dropping the worst when full. */
  push(doc: number, score: number): void {
    if (this.size < this.limit) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.better(this.docs[parent] as number, this.scores[parent] as number, doc, score)) break;
        this.docs[i] = this.docs[parent] as number;
        this.scores[i] = this.scores[parent] as number;
        i = parent;
      }
      this.docs[i] = doc;
      this.scores[i] = score;
      return;
    }
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      let worst = left;
      if (right < this.size && this.better(this.docs[left] as number, this.scores[left] as number, this.docs[right] as number, this.scores[right] as number))
        worst = right;
      if (!this.better(doc, score, this.docs[worst] as number, this.scores[worst] as number)) break;
      this.docs[i] = this.docs[worst] as number;
      this.scores[i] = this.scores[worst] as number;
      i = worst;
    }
    this.docs[i] = doc;
    this.scores[i] = score;
  }

  /** Kept documents, best first. */
  sorted(): ScoredDoc[] {
    const out: ScoredDoc[] = [];
    for (let i = 0; i < this.size; i++) out.push({ doc: this.docs[i] as number, score: this.scores[i] as number });
    return out.sort((a, b) => (this.better(a.doc, a.score, b.doc, b.score) ? -1 : 1));
  }

  /** Whether (a, sa) ranks before (b, sb): a higher score, or the same and a smaller id. */
  private better(a: number, sa: number, b: number, sb: number): boolean {
    return sa > sb || (sa === sb && this.idBefore(a, b));
  }
}
