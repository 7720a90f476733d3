/**
 * Reading one term's postings forwards, in document order: the segment's, varint-packed
 * (bm25-segment.ts), then those added since (bm25-delta.ts: `doc * 256 + tf`, every document after
 * the segment's). The scorers (bm25-scorer.ts) read each query term through one; the index (bm25.ts)
 * counts a term's live documents and works out its scoring bound with one too.
 */

/** A document number past every document: a cursor at the end of its postings. */
export const END = 0x7fffffff;

/** One term's postings, read forwards. `doc` is END past the last. */
export class PostingCursor {
  doc = -1;
  tf = 0;
  private deltaAt = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private at: number,
    private readonly end: number,
    private readonly delta: readonly number[] | undefined,
  ) {}

  /** Moves to the next posting; returns its document (END past the last). */
  next(): number {
    if (this.at < this.end) {
      const data = this.bytes;
      let p = this.at;
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
      this.doc += (value >>> 1) + 1;
      this.tf = value & 1 ? (data[p++] as number) : 1;
      this.at = p;
      return this.doc;
    }
    const delta = this.delta;
    if (delta !== undefined && this.deltaAt < delta.length) {
      const packed = delta[this.deltaAt++] as number;
      this.doc = Math.floor(packed / 256);
      this.tf = packed % 256;
      return this.doc;
    }
    this.doc = END;
    return END;
  }

  /** Moves to the first posting at or after `target`; returns its document. */
  advance(target: number): number {
    let doc = this.doc;
    while (doc < target) doc = this.next();
    return doc;
  }
}
