/**
 * The compact, immutable form of an index: what a snapshot holds and what `load` gives back as
 * views on the buffer. Changes made after it was built live beside it (see bm25.ts) until the next
 * compaction folds both into a new segment.
 *
 * Postings of a term are its documents in ascending order, each as one unsigned LEB128 varint
 * `(gap - 1) * 2 + (tf > 1 ? 1 : 0)` followed, only when tf > 1, by one byte of tf. Most gaps fit
 * in a byte and most term frequencies are 1, so a posting costs about 1.5 bytes instead of the
 * 5 of a Uint32 document number and a Uint8 frequency: that is what keeps a 100k-note snapshot
 * under 20 MB.
 */
import { mergeSorted } from './term-match.js';

export interface Segment {
  /** Document ids by document number; all live. */
  ids: string[];
  /** Length of each document in terms. */
  lengths: Uint32Array;
  /** Sorted, distinct. */
  terms: string[];
  /** Number of documents of each term (never 0). */
  df: Uint32Array;
  /** terms.length + 1 byte offsets into postings. */
  offsets: Uint32Array;
  postings: Uint8Array;
}

/** Term frequencies are clamped here everywhere, so one byte holds them; BM25 saturates long before. */
export const MAX_TF = 255;

/** Document numbers stay below 2^31 so a varint value fits in 32 bits. */
export const MAX_DOCS = 0x7fffffff;

export function emptySegment(): Segment {
  return { ids: [], lengths: new Uint32Array(0), terms: [], df: new Uint32Array(0), offsets: new Uint32Array(1), postings: new Uint8Array(0) };
}

/**
 * Decodes the postings in bytes [from, to) of `data` into `docs` and `tfs` from index `at`, and
 * returns the index after the last (the arrays must have room).
 */
export function decodePostingsInto(data: Uint8Array, from: number, to: number, docs: Int32Array, tfs: Uint8Array, at: number): number {
  let p = from;
  let doc = -1;
  let i = at;
  while (p < to) {
    let byte = data[p++] as number;
    let value = byte & 127;
    if (byte & 128) {
      let scale = 128;
      do {
        byte = data[p++] as number;
        value += (byte & 127) * scale;
        scale *= 128;
      } while (byte & 128);
    }
    doc += (value >>> 1) + 1;
    docs[i] = doc;
    tfs[i++] = value & 1 ? (data[p++] as number) : 1;
  }
  return i;
}

/**
 * Encodes `count` postings (ascending docs) at `at` in `bytes`, which must have room for 6 bytes
 * per posting, and returns the offset after the last byte written.
 */
export function encodePostings(docs: Int32Array, tfs: Uint8Array, count: number, bytes: Uint8Array, at: number): number {
  let p = at;
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const doc = docs[i] as number;
    const tf = tfs[i] as number;
    let value = (doc - previous - 1) * 2 + (tf > 1 ? 1 : 0);
    previous = doc;
    while (value >= 128) {
      bytes[p++] = (value & 127) | 128;
      value >>>= 7;
    }
    bytes[p++] = value;
    if (tf > 1) bytes[p++] = tf;
  }
  return p;
}

/** What a compaction reads: the segment, the postings added since, and which documents live. */
export interface CompactionInput {
  base: Segment;
  /** The terms of documents added since the segment, sorted and distinct. */
  deltaTerms: readonly string[];
  /** Their postings packed as `doc * 256 + tf`, ascending, every doc above the base's. */
  deltaPostings: (term: string) => readonly number[] | undefined;
  deltaPostingCount: number;
  /** Id of every document number, undefined once removed. */
  docIds: readonly (string | undefined)[];
  lengths: Uint32Array;
}

/**
 * One segment with every live document renumbered densely (in the old order, so postings stay
 * sorted) and every term that still has a live document.
 */
export function compact(input: CompactionInput): Segment {
  const { base, docIds } = input;
  const renumber = new Int32Array(docIds.length).fill(-1);
  const ids: string[] = [];
  const lengths: number[] = [];
  docIds.forEach((id, doc) => {
    if (id === undefined) return;
    renumber[doc] = ids.length;
    ids.push(id);
    lengths.push(input.lengths[doc] as number);
  });

  let bytes = new Uint8Array(Math.max(64, base.postings.length + input.deltaPostingCount * 2));
  let length = 0;
  let docs = new Int32Array(1024);
  let tfs = new Uint8Array(1024);
  const terms: string[] = [];
  const df: number[] = [];
  const offsets: number[] = [0];
  let next = 0; // the first base term not yet passed: both lists are sorted
  for (const term of mergeSorted(base.terms, input.deltaTerms)) {
    while (next < base.terms.length && (base.terms[next] as string) < term) next++;
    const t = base.terms[next] === term ? next : undefined;
    const added = input.deltaPostings(term) ?? [];
    const most = (t === undefined ? 0 : (base.df[t] as number)) + added.length;
    if (most > docs.length) {
      docs = new Int32Array(most * 2);
      tfs = new Uint8Array(most * 2);
    }
    let count = t === undefined ? 0 : decodePostingsInto(base.postings, base.offsets[t] as number, base.offsets[t + 1] as number, docs, tfs, 0);
    for (const packed of added) {
      docs[count] = Math.floor(packed / 256);
      tfs[count++] = packed % 256;
    }
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const renumbered = renumber[docs[i] as number] as number;
      if (renumbered < 0) continue;
      docs[kept] = renumbered;
      tfs[kept++] = tfs[i] as number;
    }
    if (kept === 0) continue;
    if (length + kept * 6 > bytes.length) {
      const bigger = new Uint8Array(Math.max(bytes.length * 2, length + kept * 6));
      bigger.set(bytes.subarray(0, length));
      bytes = bigger;
    }
    length = encodePostings(docs, tfs, kept, bytes, length);
    terms.push(term);
    df.push(kept);
    offsets.push(length);
  }
  return {
    ids,
    lengths: Uint32Array.from(lengths),
    terms,
    df: Uint32Array.from(df),
    offsets: Uint32Array.from(offsets),
    postings: bytes.slice(0, length),
  };
}
