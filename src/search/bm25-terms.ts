/**
 * A segment's sorted terms as a snapshot holds them: UTF-8 end to end, with where each ends. A term
 * becomes a string when a search first asks for it (an exact lookup, a prefix range, a typo scan) and
 * is kept; the rest stay bytes. At a million notes (a million terms: each note's unique id is one),
 * splitting them all into strings at load was the largest part of a new process's first search.
 */
import { IdList } from './bm25-ids.js';

/** Sorted terms, read one at a time: a plain array is one, and so is a TermList. */
export interface SortedTerms {
  readonly length: number;
  at(index: number): string | undefined;
}

export class TermList implements SortedTerms {
  /** Terms made strings so far, by position (created on the first ask). */
  private made: (string | undefined)[] | undefined;
  private madeCount = 0;
  private madeChars = 0;

  constructor(
    readonly bytes: Buffer,
    readonly ends: Uint32Array,
  ) {}

  get length(): number {
    return this.ends.length;
  }

  at(index: number): string | undefined {
    if (index < 0 || index >= this.ends.length) return undefined;
    // Filled, not holey: V8 keeps a filled array's elements fast (a holey one of a million may not be).
    const made = (this.made ??= new Array<string | undefined>(this.ends.length).fill(undefined));
    let term = made[index];
    if (term === undefined) {
      term = this.bytes.toString('utf8', index === 0 ? 0 : (this.ends[index - 1] as number), this.ends[index]);
      made[index] = term;
      this.madeCount++;
      this.madeChars += term.length;
    }
    return term;
  }

  /** Every term as a string (a compaction merges them with new ones). */
  toArray(): string[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i) as string);
  }

  /** What the terms made strings hold besides the bytes (`bytes` estimates), in string headers, characters and slots. */
  madeBytes(stringBytes: number, slotBytes: number): number {
    if (!this.made) return 0;
    return this.made.length * slotBytes + this.madeChars + this.madeCount * stringBytes;
  }

  /** The list of `terms` (sorted), which it keeps as the strings made: a caller hands over an array it no longer changes. */
  static of(terms: string[]): TermList {
    const { bytes, ends } = IdList.of(terms); // the same layout: UTF-8 end to end, with where each ends
    const list = new TermList(bytes, ends);
    list.made = terms;
    list.madeCount = terms.length;
    list.madeChars = terms.reduce((sum, term) => sum + term.length, 0);
    return list;
  }
}
