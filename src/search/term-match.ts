/**
 * Finding index terms near a query term in a sorted term list: by prefix (binary search) and by
 * edit distance (a scan restricted to terms of the same first character and a close length).
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
 * Optimal string alignment distance (Levenshtein plus adjacent transposition, so "databse" and
 * "teh" are one typo away) when it is at most `max`; otherwise any value above `max`. Gives up as
 * soon as a whole row exceeds `max`, which is what keeps a scan over thousands of terms cheap.
 * `rows` is scratch space of at least 3 * (b.length + 1) entries, so a scan allocates once.
 */
export function boundedEditDistance(a: string, b: string, max: number, rows = new Int32Array(3 * (b.length + 1))): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  const width = m + 1;
  const beyond = max + 1;
  // Rows i - 2, i - 1 and i live at rotating thirds of `rows`. Only the band |i - j| <= max is
  // computed; the cell just outside it on either side is set to `beyond` so neighbours read it.
  let before = 0;
  let previous = width;
  let current = 2 * width;
  for (let j = 0; j <= m; j++) rows[previous + j] = j <= max ? j : beyond;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(m, i + max);
    rows[current] = i;
    if (lo > 1) rows[current + lo - 1] = beyond;
    let rowMin = i <= max ? i : beyond;
    const ca = a.charCodeAt(i - 1);
    const caBefore = i > 1 ? a.charCodeAt(i - 2) : -1;
    for (let j = lo; j <= hi; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = (rows[previous + j - 1] as number) + (ca === cb ? 0 : 1);
      const deletion = (rows[previous + j] as number) + 1;
      const insertion = (rows[current + j - 1] as number) + 1;
      if (deletion < d) d = deletion;
      if (insertion < d) d = insertion;
      if (j > 1 && ca === b.charCodeAt(j - 2) && caBefore === cb) {
        const transposition = (rows[before + j - 2] as number) + 1;
        if (transposition < d) d = transposition;
      }
      rows[current + j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (hi < m) rows[current + hi + 1] = beyond;
    if (rowMin > max) return beyond;
    const recycled = before;
    before = previous;
    previous = current;
    current = recycled;
  }
  return Math.min(rows[previous + m] as number, beyond);
}

/**
 * Calls `visit` with every term within `maxEdits` of `form` that shares its first character.
 * Typos in the first letter are rare, and requiring it cuts the scan to a small slice of the list.
 */
export function forEachFuzzy(sorted: SortedTerms, form: string, maxEdits: number, visit: (term: string) => void): void {
  if (form.length === 0 || maxEdits <= 0) return;
  const first = form.charCodeAt(0);
  const from = lowerBound(sorted, form[0] as string);
  const to = lowerBound(sorted, String.fromCharCode(first + 1));
  const rows = new Int32Array(3 * (form.length + maxEdits + 1));
  for (let i = from; i < to; i++) {
    const term = sorted.at(i) as string;
    if (Math.abs(term.length - form.length) > maxEdits || term === form) continue;
    if (boundedEditDistance(form, term, maxEdits, rows) <= maxEdits) visit(term);
  }
}
