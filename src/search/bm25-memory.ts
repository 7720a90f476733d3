/**
 * The memory an index holds, as `bytes` (TextIndex) estimates it for a memory budget: V8's costs on a
 * 64-bit heap, and a segment's share. Typed arrays count by their length; every string as a V8
 * header plus a byte a character (ids and terms are one-byte strings unless they hold other
 * scripts: then an underestimate); every slot of a plain array a pointer, and a term's postings
 * array added since the segment the 16 slots V8 gives an array on its first push; every Map entry
 * what V8's ordered hash table spends on it; and the fixed cost of an empty index. Checked against
 * the heap growth of 500 indexes of 20 notes and one of 100,000 (just built, compacted, loaded from
 * a snapshot): from equal to 22% below it. Also how the index's typed arrays grow.
 */
import type { Segment } from './bm25-segment.js';

/** V8's costs on a 64-bit heap: a string's header, a pointer, an empty array, an entry of a Map (with its share of buckets). */
export const STRING_BYTES = 20;
export const SLOT_BYTES = 8;
export const ARRAY_BYTES = 32;
export const MAP_ENTRY_BYTES = 40;
/** An index holding nothing (the object, its analyser, empty maps), measured on Node 20 beside the scratch array counted apart. */
export const EMPTY_INDEX_BYTES = 5_000;

/** A segment's arrays, its ids' and terms' bytes, and the terms made strings so far. */
export function segmentBytes(segment: Segment): number {
  return (
    segment.postings.byteLength +
    segment.offsets.byteLength +
    segment.df.byteLength +
    segment.lengths.byteLength +
    segment.ids.bytes.byteLength +
    segment.ids.ends.byteLength +
    segment.terms.bytes.byteLength +
    segment.terms.ends.byteLength +
    segment.terms.madeBytes(STRING_BYTES, SLOT_BYTES) +
    segment.idSlots.byteLength +
    segment.idRanks.byteLength +
    segment.termSlots.byteLength
  );
}

/** A copy of `array` with room for at least `needed` elements (doubling, so appends stay amortised O(1)). */
export function grown<T extends Uint32Array | Int32Array | Uint8Array>(array: T, needed: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(Math.max(16, needed, array.length * 2));
  bigger.set(array);
  return bigger;
}
