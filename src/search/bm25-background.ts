/**
 * The background documents of an index (IndexOptions.countedPrefixes): those whose ids start with
 * none of the counted prefixes, searched like any other but left out of the statistics that weigh
 * words (N, df, the average length) unless they are all there is. Known by a mask over document
 * numbers built when a search first needs it (a loaded snapshot classifies its ids then, by their
 * first bytes), then kept as documents come and go, until a compaction renumbers them.
 */
import { MemoCache } from '../shared/bounded-cache.js';
import type { IdList } from './bm25-ids.js';
import { grown } from './bm25-memory.js';

/** Background-document term counts kept (a `MemoCache`): one forgotten is counted again when asked. */
const BACKGROUND_DF_CACHED = 100_000;

/** The background documents by number, how many are live and their length in terms. */
export interface BackgroundDocs {
  mask: Uint8Array;
  live: number;
  length: number;
}

export class Background {
  /** Null until first needed, and again after a compaction. */
  private docs: BackgroundDocs | null = null;
  /** Live background documents holding a term, counted from its postings when first asked (bm25.ts); cleared when one changes. */
  readonly df = new MemoCache<number>(BACKGROUND_DF_CACHED);
  /** The counted prefixes as UTF-8 bytes, for ids a segment keeps as bytes. */
  private readonly prefixBytes: readonly Buffer[];

  /** `prefixes`: the counted ones (none: every document counts, and there is no background). */
  constructor(private readonly prefixes: readonly string[] | undefined) {
    this.prefixBytes = (prefixes ?? []).map((prefix) => Buffer.from(prefix, 'utf8'));
  }

  /** Whether a document of this id counts in the statistics. */
  counts(id: string): boolean {
    return this.prefixes === undefined || this.prefixes.some((prefix) => id.startsWith(prefix));
  }

  /** Counts a document just added, once the mask exists (it is built with the documents of its time). */
  added(doc: number, id: string, length: number): void {
    if (this.docs && !this.counts(id)) this.mark(doc, length);
  }

  removed(doc: number, length: number): void {
    if (this.docs?.mask[doc] !== 1) return;
    this.docs.live--;
    this.docs.length -= length;
    this.df.clear();
  }

  /** Forgets the mask and the counts: the documents are numbered anew. */
  reset(): void {
    this.docs = null;
    this.df.clear();
  }

  /**
   * The background documents when the statistics leave them out: some are live, and so are others
   * (`live` documents in all). The mask is built on first use, from the segment's ids (`ids`), those
   * added since (numbered after them) and which documents are removed.
   */
  apart(ids: IdList, deltaIds: readonly string[], removed: Uint8Array, lengths: Uint32Array, live: number): BackgroundDocs | null {
    if (this.prefixes !== undefined && this.docs === null) {
      const count = ids.length + deltaIds.length;
      this.docs = { mask: new Uint8Array(Math.max(16, count)), live: 0, length: 0 };
      for (let doc = 0; doc < count; doc++) {
        if (removed[doc] === 1) continue;
        const counted = doc < ids.length ? ids.startsWithAny(doc, this.prefixBytes) : this.counts(deltaIds[doc - ids.length] as string);
        if (!counted) this.mark(doc, lengths[doc] as number);
      }
    }
    const docs = this.docs;
    return docs && docs.live > 0 && docs.live < live ? docs : null;
  }

  /** The mask's bytes (`bytes` estimates). */
  maskBytes(): number {
    return this.docs?.mask.byteLength ?? 0;
  }

  private mark(doc: number, length: number): void {
    const docs = this.docs as BackgroundDocs;
    if (doc >= docs.mask.length) docs.mask = grown(docs.mask, doc + 1);
    docs.mask[doc] = 1;
    docs.live++;
    docs.length += length;
    this.df.clear();
  }
}
