/**
 * The terms and postings of the documents added to an index since its segment (bm25-segment.ts), in
 * plain arrays until a compaction packs them into the next segment: terms numbered in order of
 * appearance, the postings of each as `doc * 256 + tf` (ascending, since documents are numbered in
 * order), read after the segment's by the index's cursors (bm25-cursor.ts). The index's `add`
 * (bm25.ts) counts a document's terms into `frequencies` and appends to `postings` itself: its loops
 * read these arrays directly.
 */
import { MemoCache } from '../shared/bounded-cache.js';
import { type Analyzer, DEFAULT_CACHE_LIMIT, detach } from './analyze.js';
import { ARRAY_BYTES, grown, MAP_ENTRY_BYTES, SLOT_BYTES, STRING_BYTES } from './bm25-memory.js';
import { mergeSorted } from './term-match.js';

export class Delta {
  /** Term → its number. */
  private numbers = new Map<string, number>();
  /** Terms by number. */
  terms: string[] = [];
  /** Postings by term number. */
  postings: number[][] = [];
  postingCount = 0;
  /** Scratch term frequencies by term number, all zero between calls to add. */
  frequencies = new Int32Array(1024);
  /** The terms in sorted order, for prefix and fuzzy matching; covers terms[0, sortedCount). */
  private sorted: string[] = [];
  private sortedCount = 0;
  /** Raw word → its term numbers (its characters tallied for `bytes`): one hash lookup per word is the bulk of indexing time. */
  private readonly wordTerms = new MemoCache<readonly number[]>(DEFAULT_CACHE_LIMIT, (word) => word.length);
  /** Characters of the terms, kept as they change (for `bytes`). */
  private termChars = 0;

  /** `analyzer`: the index's, which caches nothing (this caches per word). */
  constructor(private readonly analyzer: Analyzer) {}

  /** The numbers of a word's terms, numbering those new. */
  termNumbersOf(word: string): readonly number[] {
    let numbers = this.wordTerms.get(word);
    if (numbers === undefined) {
      numbers = this.analyzer.termsOf(word).map((term) => this.numberOf(term));
      this.wordTerms.set(detach(word), numbers);
    }
    return numbers;
  }

  postingsOf(term: string): number[] | undefined {
    const n = this.numbers.get(term);
    return n === undefined ? undefined : this.postings[n];
  }

  sortedTerms(): string[] {
    if (this.sortedCount < this.terms.length) {
      this.sorted = mergeSorted(this.sorted, this.terms.slice(this.sortedCount).sort());
      this.sortedCount = this.terms.length;
    }
    return this.sorted;
  }

  /** Empties it: a compaction packed it into the segment. */
  reset(): void {
    this.numbers = new Map();
    this.terms = [];
    this.postings = [];
    this.postingCount = 0;
    this.sorted = [];
    this.sortedCount = 0;
    this.wordTerms.clear();
    this.termChars = 0;
  }

  /** Its share of the index's `bytes` (bm25-memory.ts): a postings array counts the 16 slots of its first push. */
  bytes(): number {
    const terms = this.terms.length;
    const words = this.wordTerms.size;
    return (
      (terms + words) * STRING_BYTES +
      this.termChars +
      this.wordTerms.weight +
      (terms * 2 + this.sorted.length + this.postingCount) * SLOT_BYTES +
      terms * (ARRAY_BYTES + 16 * SLOT_BYTES) +
      words * (ARRAY_BYTES + 2 * SLOT_BYTES) +
      (this.numbers.size + words) * MAP_ENTRY_BYTES +
      this.frequencies.byteLength
    );
  }

  private numberOf(term: string): number {
    let n = this.numbers.get(term);
    if (n === undefined) {
      n = this.terms.length;
      this.numbers.set(term, n);
      this.terms.push(term);
      this.termChars += term.length;
      this.postings.push([]);
      if (n >= this.frequencies.length) this.frequencies = grown(this.frequencies, n + 1);
    }
    return n;
  }
}
