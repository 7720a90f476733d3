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
import { IdList, IdListBuilder, idRanks, idTable, tableSize } from './bm25-ids.js';
import { type SortedTerms, TermList } from './bm25-terms.js';
import { mergeSorted } from './term-match.js';
import { CorruptIndexError } from './types.js';

export interface Segment {
  /** Document ids by document number; all live. */
  ids: IdList;
  /** The ids' hash table (bm25-ids.ts idTable): stored in a snapshot, so a load builds nothing. */
  idSlots: Int32Array;
  /** Each id's rank in string order (bm25-ids.ts idRanks): the scorers' tie-break, stored like the table. */
  idRanks: Int32Array;
  /** Length of each document in terms. */
  lengths: Uint32Array;
  /** The lengths added up (kept in the snapshot's meta: a load need not add them up again). */
  totalLength: number;
  /** Sorted, distinct. */
  terms: TermList;
  /** Number of documents of each term (never 0). */
  df: Uint32Array;
  /** terms.length + 1 byte offsets into postings. */
  offsets: Uint32Array;
  postings: Uint8Array;
  /** The terms' hash table (termTable), stored like the ids'. */
  termSlots: Int32Array;
  /**
   * Whether postings bytes [from, to) match their checksums, for a segment loaded from a snapshot that
   * checks them as they are first read (bm25-snapshot.ts); absent for one built in memory.
   */
  postingsSound?: (from: number, to: number) => boolean;
}

/**
 * Throws CorruptIndexError unless postings bytes [from, to) are sound: a loaded segment's are checked
 * as they are first read (bm25-snapshot.ts), before anything is answered from them.
 */
export function checkPostings(segment: Segment, from: number, to: number): void {
  if (segment.postingsSound !== undefined && !segment.postingsSound(from, to))
    throw new CorruptIndexError('search index snapshot damaged: a block of its postings does not match its checksum');
}

/** Term frequencies are clamped here everywhere, so one byte holds them; BM25 saturates long before. */
export const MAX_TF = 255;

/** Document numbers stay below 2^31 so a varint value fits in 32 bits. */
export const MAX_DOCS = 0x7fffffff;

export function emptySegment(): Segment {
  const ids = IdList.of([]);
  return {
    ids,
    idSlots: idTable(ids),
    idRanks: new Int32Array(0),
    lengths: new Uint32Array(0),
    totalLength: 0,
    terms: TermList.of([]),
    df: new Uint32Array(0),
    offsets: new Uint32Array(1),
    postings: new Uint8Array(0),
    termSlots: termTable([]),
  };
}

/**
 * FNV-1a over the length and the last HASHED_CHARS code units of a term. A stored table depends on
 * it: changing it changes the term table's section version (bm25-snapshot.ts).
 */
function hashOf(key: string): number {
  let hash = Math.imul(0x811c9dc5 ^ key.length, 0x01000193);
  for (let i = Math.max(0, key.length - HASHED_CHARS); i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
const HASHED_CHARS = 20;

/** A hash table of distinct terms (at most half full, so probes stay short): each one's position + 1 by hashOf, linear probing. */
export function termTable(terms: SortedTerms): Int32Array {
  const slots = new Int32Array(tableSize(terms.length));
  const mask = slots.length - 1;
  for (let i = 0; i < terms.length; i++) {
    let slot = hashOf(terms.at(i) as string) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = i + 1;
  }
  return slots;
}

/** The number of `term` in the segment, or undefined; its postings checked first (checkPostings). */
export function termOf(segment: Segment, term: string): number | undefined {
  const t = findTerm(segment.termSlots, segment.terms, term);
  if (t !== undefined) checkPostings(segment, segment.offsets[t] as number, segment.offsets[t + 1] as number);
  return t;
}

/** The position of `term` in `terms` by their table (termTable), or undefined. */
export function findTerm(slots: Int32Array, terms: SortedTerms, term: string): number | undefined {
  const mask = slots.length - 1;
  for (let slot = hashOf(term) & mask; ; slot = (slot + 1) & mask) {
    const entry = slots[slot] as number;
    if (entry === 0) return undefined;
    if (terms.at(entry - 1) === term) return entry - 1;
  }
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
  /** Ids of the documents added since the segment (numbered from the segment's count on). */
  deltaIds: readonly string[];
  /** 1 for a removed document, by document number. */
  dead: Uint8Array;
  lengths: Uint32Array;
}

/**
 * One segment with every live document renumbered densely (in the old order, so postings stay
 * sorted) and every term that still has a live document.
 */
export function compact(input: CompactionInput): Segment {
  const { base, deltaIds, dead } = input;
  checkPostings(base, 0, base.postings.length); // every posting is read, and a new segment trusts its own
  const baseCount = base.ids.length;
  const docCount = baseCount + deltaIds.length;
  const renumber = new Int32Array(docCount).fill(-1);
  const lengths: number[] = [];
  let totalLength = 0;
  let idBytes = 0;
  for (let doc = 0; doc < docCount; doc++) {
    if (dead[doc] === 1) continue;
    renumber[doc] = lengths.length;
    lengths.push(input.lengths[doc] as number);
    totalLength += input.lengths[doc] as number;
    idBytes += doc < baseCount ? (base.ids.ends[doc] as number) - base.ids.start(doc) : Buffer.byteLength(deltaIds[doc - baseCount] as string, 'utf8');
  }
  const builder = new IdListBuilder(lengths.length, idBytes);
  for (let doc = 0; doc < docCount; doc++) {
    if (dead[doc] === 1) continue;
    if (doc < baseCount) builder.addFrom(base.ids, doc);
    else builder.addString(deltaIds[doc - baseCount] as string);
  }
  const ids = builder.done();

  let bytes = new Uint8Array(Math.max(64, base.postings.length + input.deltaPostingCount * 2));
  let length = 0;
  let docs = new Int32Array(1024);
  let tfs = new Uint8Array(1024);
  const terms: string[] = [];
  const df: number[] = [];
  const offsets: number[] = [0];
  let next = 0; // the first base term not yet passed: both lists are sorted
  const baseTerms = base.terms.toArray();
  for (const term of mergeSorted(baseTerms, input.deltaTerms)) {
    while (next < baseTerms.length && (baseTerms[next] as string) < term) next++;
    const t = baseTerms[next] === term ? next : undefined;
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
    idSlots: idTable(ids),
    idRanks: idRanks(ids),
    lengths: Uint32Array.from(lengths),
    totalLength,
    terms: TermList.of(terms),
    df: Uint32Array.from(df),
    offsets: Uint32Array.from(offsets),
    postings: bytes.slice(0, length),
    termSlots: termTable(terms),
  };
}
