/**
 * Finding index terms near a query term in a sorted term list: by prefix (binary search) and by
 * edit distance (a trie walk over the terms of the same first character).
 * Sorting is by UTF-16 code unit, the order of `Array.prototype.sort` and of `<` on strings.
 */
import { firstIndex } from '../shared/bisect.js';
import type { SortedTerms } from './bm25-terms.js';

/** Index of the first term >= key. */
export function lowerBound(sorted: SortedTerms, key: string): number {
  return firstIndex(sorted.length, (i) => (sorted.at(i) as string) >= key);
}

/** The half-open range of terms that start with `prefix`. */
export function prefixRange(sorted: SortedTerms, prefix: string): [number, number] {
  const from = lowerBound(sorted, prefix);
  let to = from;
  while (to < sorted.length && (sorted.at(to) as string).startsWith(prefix)) to++;
  return [from, to];
}

/** Merges two sorted, duplicate-free lists into one sorted list without duplicates. */
export function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as string;
    const y = b[j] as string;
    if (x <= y) {
      out.push(x);
      i++;
      if (x === y) j++;
    } else {
      out.push(y);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++] as string);
  while (j < b.length) out.push(b[j++] as string);
  return out;
}

/**
 * Optimal string alignment distances (Levenshtein plus adjacent transposition, so "databse" and
 * "teh" are one typo away) from one word to a run of sorted terms, as a trie walk over the sorted
 * list: the table's row for a term's first d characters depends on those characters only, so a term
 * reuses the rows of the prefix it shares with the term before it. A row whose every cell is beyond
 * the bound ends every term that starts with that prefix (with a transposition too: see `feed`), so
 * the scan jumps past all of them with a binary search. Among a million ids that start with "k",
 * "kinnas" reads a few thousand terms instead of every one.
 */
class EditRows {
  private readonly width: number;
  private readonly beyond: number;
  /** Row d (the distances from the term's first d characters to each prefix of the word) at d * width. */
  private readonly rows: Int32Array;
  /** The term whose rows are in `rows`, and how many of them (after row 0) are computed. */
  private term = '';
  private computed = 0;
  /** The distance of the term last fed (when `feed` returned 0), or anything above `max`. */
  distance = 0;

  constructor(
    private readonly word: string,
    readonly max: number,
  ) {
    this.width = word.length + 1;
    this.beyond = max + 1;
    // Rows beyond word.length + max are all out of the band, hence dead: never stored.
    this.rows = new Int32Array((word.length + max + 1) * this.width);
    for (let j = 0; j < this.width; j++) this.rows[j] = j <= max ? j : this.beyond;
  }

  /**
   * Computes the rows of `term`. Returns the length of its shortest prefix whose row is dead (every
   * term with that prefix is beyond the bound), or 0 with `distance` set when none is.
   */
  feed(term: string): number {
    const { rows, width, beyond, max, word } = this;
    const m = word.length;
    let shared = 0;
    const most = Math.min(this.computed, term.length);
    while (shared < most && term.charCodeAt(shared) === this.term.charCodeAt(shared)) shared++;
    this.term = term;
    this.computed = shared;
    const depth = Math.min(term.length, m + max);
    for (let i = shared + 1; i <= depth; i++) {
      const current = i * width;
      const previous = current - width;
      const before = previous - width;
      const lo = Math.max(1, i - max);
      const hi = Math.min(m, i + max);
      rows[current] = i <= max ? i : beyond;
      if (lo > 1) rows[current + lo - 1] = beyond;
      let rowMin = rows[current] as number;
      const ca = term.charCodeAt(i - 1);
      const caBefore = i > 1 ? term.charCodeAt(i - 2) : -1;
      for (let j = lo; j <= hi; j++) {
        const cb = word.charCodeAt(j - 1);
        let d = (rows[previous + j - 1] as number) + (ca === cb ? 0 : 1);
        const deletion = (rows[previous + j] as number) + 1;
        const insertion = (rows[current + j - 1] as number) + 1;
        if (deletion < d) d = deletion;
        if (insertion < d) d = insertion;
        if (j > 1 && ca === word.charCodeAt(j - 2) && caBefore === cb) {
          const transposition = (rows[before + j - 2] as number) + 1;
          if (transposition < d) d = transposition;
        }
        if (d > beyond) d = beyond;
        rows[current + j] = d;
        if (d < rowMin) rowMin = d;
      }
      if (hi < m) rows[current + hi + 1] = beyond;
      // Dead, and so is every longer prefix: a cell of the next row reached by transposition is at
      // most one more than a cell this row reaches by substitution, so it is beyond too.
      if (rowMin > max) return i;
      this.computed = i;
    }
    if (term.length > m + max) return m + max + 1;
    this.distance = Math.abs(term.length - m) > max ? beyond : (rows[term.length * width + m] as number);
    return 0;
  }
}

/** The edit distance from `a` to `b` when it is at most `max`; otherwise any value above `max`. */
export function boundedEditDistance(a: string, b: string, max: number): number {
  const rows = new EditRows(b, max);
  return rows.feed(a) === 0 ? rows.distance : max + 1;
}

/**
 * Calls `visit` with every term within `maxEdits` of `form` that shares its first character.
 * Typos in the first letter are rare, and requiring it cuts the scan to a slice of the list; the
 * slice is walked as a trie (EditRows), so only the terms along live prefixes are read.
 */
export function forEachFuzzy(sorted: SortedTerms, form: string, maxEdits: number, visit: (term: string) => void): void {
  if (form.length === 0 || maxEdits <= 0) return;
  const first = form.charCodeAt(0);
  let i = lowerBound(sorted, form[0] as string);
  const to = lowerBound(sorted, String.fromCharCode(first + 1));
  const rows = new EditRows(form, maxEdits);
  while (i < to) {
    const term = sorted.at(i) as string;
    const dead = rows.feed(term);
    if (dead === 0) {
      if (rows.distance <= maxEdits && term !== form) visit(term);
      i++;
      continue;
    }
    // Past every term that starts with the dead prefix: the first one >= that prefix's successor.
    const last = term.charCodeAt(dead - 1);
    if (last === 0xffff) {
      i++;
      continue;
    }
    const successor = term.slice(0, dead - 1) + String.fromCharCode(last + 1);
    const from = i + 1;
    i = from + firstIndex(to - from, (k) => (sorted.at(from + k) as string) >= successor);
  }
}
