import type { Category } from './validate.js';

/**
 * Note file names carry everything a read filters on, so filters are answered from a listing
 * without reading bodies: `{YYYYMMDDTHHMMSS}_{agent}_{category}_{id8}.md`.
 *
 * id8 = two base-36 characters of the millisecond within the second, then six random ones: names
 * sort in write order to the millisecond, and notes written by several processes in the same
 * millisecond still differ (create-only writes make a collision a retry, never an overwrite).
 * Agents may contain '_' (names written by the Python server): the name is parsed from both ends.
 */
export interface NoteName {
  filename: string;
  /** YYYYMMDDTHHMMSS, UTC: sorts lexically in time order. */
  stamp: string;
  agent: string;
  category: string;
  id: string;
}

const STAMP = /^\d{8}T\d{6}$/;

/**
 * The stamp of a date: 2026-02-20T18:05:12.345Z → 20260220T180512. Cut from the ISO text by place
 * (a note's write takes one; a regex replace cost more than the date's formatting); a year outside
 * 0000–9999, whose ISO text is longer, goes the general way.
 */
export function toStamp(time: Date): string {
  const iso = time.toISOString();
  if (iso.length !== 24) return iso.replace(/[-:]/g, '').slice(0, 15);
  return iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 13) + iso.slice(14, 16) + iso.slice(17, 19);
}

export function formatNoteName(time: Date, agent: string, category: Category, random6: string): string {
  const millis = time.getUTCMilliseconds().toString(36).padStart(2, '0');
  return `${toStamp(time)}_${agent}_${category}_${millis}${random6}.md`;
}

/**
 * Parses a note file name, or returns null for anything else (.keep, stray files). Runs once per
 * note per listing, so it slices strings rather than running a regex or building dates.
 */
export function parseNoteName(filename: string): NoteName | null {
  if (!filename.endsWith('.md') || filename.charCodeAt(15) !== 95 /* _ */) return null;
  const stamp = filename.slice(0, 15);
  const idStart = filename.lastIndexOf('_');
  const categoryStart = filename.lastIndexOf('_', idStart - 1);
  if (categoryStart <= 16 || !STAMP.test(stamp)) return null;
  const id = filename.slice(idStart + 1, -3);
  const category = filename.slice(categoryStart + 1, idStart);
  if (id.length === 0 || category.length === 0) return null;
  return { filename, stamp, agent: filename.slice(16, categoryStart), category, id };
}

/**
 * Newest first: by stamp, then by id (whose first two characters are the millisecond), then by
 * filename — a total order, so two listings of the same names sort alike and can be compared.
 */
export function compareNewestFirst(a: NoteName, b: NoteName): number {
  if (a.stamp !== b.stamp) return a.stamp < b.stamp ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return a.filename < b.filename ? 1 : a.filename > b.filename ? -1 : 0;
}

/**
 * Sorts names oldest first (the reverse of compareNewestFirst), in place. A listing's names come in
 * key order, which is already stamp order: then only the names sharing a second are sorted (by id),
 * a linear pass instead of a comparison sort of the whole listing. Any other order is sorted whole.
 */
export function sortOldestFirst(names: NoteName[]): NoteName[] {
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as NoteName).stamp > (names[i] as NoteName).stamp) return names.sort((a, b) => compareNewestFirst(b, a));
  }
  for (let start = 0; start < names.length; ) {
    const stamp = (names[start] as NoteName).stamp;
    let end = start + 1;
    while (end < names.length && (names[end] as NoteName).stamp === stamp) end++;
    if (end - start > 1) {
      const run = names.slice(start, end).sort((a, b) => compareNewestFirst(b, a));
      for (let i = 0; i < run.length; i++) names[start + i] = run[i] as NoteName;
    }
    start = end;
  }
  return names;
}

/** What changed between two listings sorted oldest first: the names only in `after`, and those only in `before`. */
export function diffListings(before: readonly NoteName[], after: readonly NoteName[]): { added: NoteName[]; removed: NoteName[] } {
  const added: NoteName[] = [];
  const removed: NoteName[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const now = after[j];
    const order = old === undefined ? 1 : now === undefined ? -1 : compareNewestFirst(now, old);
    if (order === 0) {
      i++;
      j++;
    } else if (order < 0) {
      removed.push(old as NoteName); // older than every name left in `after`: gone
      i++;
    } else {
      added.push(now as NoteName);
      j++;
    }
  }
  return { added, removed };
}

/** The ISO 8601 form of a stamp, at second precision as the seed writes timestamps: 2026-02-20T18:05:12Z. */
export const stampToIso = (stamp: string): string =>
  `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`;

export { isoSeconds } from '../shared/time.js';
