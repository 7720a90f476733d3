/**
 * A compact BM25 full-text index (k1 and b in bm25-query.ts) with prefix and typo matching, written for fast cold
 * loads: a snapshot is a checksum and a few typed-array views away from answering (its postings checked as read).
 *
 * State: one immutable segment (loaded or compacted, postings varint-packed: bm25-segment.ts) plus the documents
 * added since, whose postings sit in plain arrays (bm25-delta.ts). Removal marks the document dead; searches skip
 * dead documents and count only live ones in df, N and the average length, so results do not depend on whether a
 * compaction (on `serialize`, or once dead documents outnumber live ones) has run yet.
 */
import { MemoCache } from '../shared/bounded-cache.js';
import { createAnalyzer, words } from './analyze.js';
import { Background } from './bm25-background.js';
import { END, PostingCursor } from './bm25-cursor.js';
import { Delta } from './bm25-delta.js';
import { findId, IdStrings } from './bm25-ids.js';
import { EMPTY_INDEX_BYTES, grown, MAP_ENTRY_BYTES, SLOT_BYTES, segmentBytes, STRING_BYTES } from './bm25-memory.js';
import { checkPostings, compact, emptySegment, MAX_DOCS, MAX_TF, type Segment, termOf } from './bm25-segment.js';
import { planQuery, type QueryTerm } from './bm25-query.js';
import { decodeSnapshot, encodeSnapshot } from './bm25-snapshot.js';
import { Scratch, scoreAll, scoreTopK, tfBound, type ScoredTerm } from './bm25-scorer.js';
import type { SearchHit, SearchOptions, TextIndex, TextIndexEngine } from './types.js';

export { ARRAY_BYTES, MAP_ENTRY_BYTES, SLOT_BYTES, STRING_BYTES } from './bm25-memory.js';

const ENGINE_NAME = 'bm25-v1';

/** Below this many dead documents, compacting would cost more than it frees. */
const MIN_DEAD_TO_COMPACT = 1024;
/**
 * Past this many postings added since the segment, they are packed into it: a delta posting costs
 * about three times its packed form (plain arrays, a term map, a word cache), so a build from scratch
 * held its whole index three times over until its snapshot compacted it. Bounded so, the delta stays
 * under about 60 MB, and a 1M-note build compacts a dozen times, each in time linear in the segment.
 */
const MAX_DELTA_POSTINGS = 1 << 21;

const engine = (exhaustive: boolean): TextIndexEngine => ({
  name: ENGINE_NAME,
  create: (options) => new Bm25Index(emptySegment(), options?.countedPrefixes, [], exhaustive),
  load: (buffer, options) => {
    const { segment, rebuilt } = decodeSnapshot(buffer, ENGINE_NAME);
    return new Bm25Index(segment, options?.countedPrefixes, rebuilt, exhaustive);
  },
});

export const bm25Engine: TextIndexEngine = engine(false);

/** The same engine scoring every posting of every query term (bm25-scorer.ts `scoreAll`): the reference the pruned scorer must match to the bit; tests only. */
export const bm25ExhaustiveEngine: TextIndexEngine = engine(true);

/** Segment terms whose postings' extremes (a scoring bound) are kept once scanned: those with this many postings or more… */
const EXTREMES_FROM_DF = 256;
/** …up to this many terms (a `MemoCache`): one forgotten is scanned again when asked. */
const EXTREMES_CACHED = 100_000;
/** Segment ids kept as strings (idStrings): a few hundred queries' candidates. */
const ID_STRINGS_KEPT = 50_000;

class Bm25Index implements TextIndex {
  // The index caches per word below, so the analyser need not cache too.
  private readonly analyzer = createAnalyzer({ cacheLimit: 0 });
  private base!: Segment;
  /** The terms and postings of the documents added since the segment (bm25-delta.ts). */
  private readonly delta = new Delta(this.analyzer);
  /**
   * Ids of the documents added since the segment, numbered after its own: the segment's stay bytes
   * (bm25-ids.ts), found by its stored table (a Map of a million ids took 0.6 s to build at each load,
   * and 40 bytes an entry) and made strings only when asked for.
   */
  private deltaIds!: string[];
  /** 1 for a removed document, by document number; its capacity runs ahead of the documents. */
  private removed!: Uint8Array;
  /** Length in terms by document number; its capacity runs ahead of the documents. */
  private lengths!: Uint32Array;
  /** Documents added since the segment, by id. */
  private readonly deltaDocs = new Map<string, number>();
  private live = 0;
  private dead = 0;
  private totalLength = 0;
  /** Characters of the ids added since the segment, kept as they change (for `bytes`). */
  private idChars = 0;

  /** The documents the statistics leave out (IndexOptions.countedPrefixes). */
  private readonly background: Background;
  /** The scorer's window arrays, reused from search to search. */
  private readonly scratch = new Scratch();
  /** Per segment term (a long list), its postings' shortest document length * 256 + largest term frequency (baseExtremes). */
  private readonly extremes = new MemoCache<number, number>(EXTREMES_CACHED);

  /** Segment ids made strings, by document number (bm25-ids.ts). */
  private idStrings!: IdStrings;

  /** The sections a load had to compute again (TextIndex.rebuilt). */
  readonly rebuilt: readonly string[];

  constructor(
    segment: Segment,
    countedPrefixes?: readonly string[],
    rebuilt: readonly string[] = [],
    /** Scores every posting (bm25ExhaustiveEngine): the reference, for tests. */
    private readonly exhaustive = false,
  ) {
    this.background = new Background(countedPrefixes);
    this.rebuilt = rebuilt;
    this.adopt(segment);
  }

  get size(): number {
    return this.live;
  }

  /** Bumped by each compaction, which numbers the documents anew. */
  numbering = 0;

  has(id: string): boolean {
    return this.docOf(id) !== undefined;
  }

  idAt = (doc: number): string | undefined => (Number.isInteger(doc) && doc >= 0 && doc < this.docCount ? this.idOf(doc) : undefined);

  /**
   * The ids as of the call, those starting with `prefix` when given (compared as bytes: the others are
   * never made strings). A caller may add and remove while iterating: the iteration keeps the
   * segment, the delta and which documents were removed as they were at the call.
   */
  *ids(prefix?: string): IterableIterator<string> {
    const { ids } = this.base;
    const deltaIds = this.deltaIds.slice();
    const removed = this.removed.slice(0, ids.length + deltaIds.length);
    const bytes = prefix === undefined ? undefined : Buffer.from(prefix, 'utf8');
    for (let doc = 0; doc < ids.length; doc++) if (removed[doc] !== 1 && (bytes === undefined || ids.startsWith(doc, bytes))) yield ids.get(doc);
    for (const [i, id] of deltaIds.entries()) if (removed[ids.length + i] !== 1 && (prefix === undefined || id.startsWith(prefix))) yield id;
  }

  /** Documents numbered so far, removed ones included. */
  private get docCount(): number {
    return this.base.ids.length + this.deltaIds.length;
  }

  /** The id of a document, undefined once removed. */
  private idOf(doc: number): string | undefined {
    if (this.removed[doc] === 1) return undefined;
    const baseCount = this.base.ids.length;
    return doc >= baseCount ? this.deltaIds[doc - baseCount] : this.idStrings.get(doc);
  }

  /** Whether a live document's id sorts before another's (the scorers' tie-break). */
  private idBefore(a: number, b: number): boolean {
    const { ids } = this.base;
    if (a < ids.length && b < ids.length) return (this.base.idRanks[a] as number) < (this.base.idRanks[b] as number);
    return (this.idOf(a) as string) < (this.idOf(b) as string);
  }

  add(id: string, text: string): void {
    const textWords = words(text);
    this.remove(id);
    const doc = this.docCount;
    if (doc >= MAX_DOCS) throw new RangeError('search index is full: 2^31 document numbers used');
    if (doc >= this.lengths.length) this.lengths = grown(this.lengths, doc + 1);
    if (doc >= this.removed.length) this.removed = grown(this.removed, doc + 1);

    const { delta } = this;
    const touched: number[] = [];
    let length = 0;
    for (const word of textWords) {
      const numbers = delta.termNumbersOf(word); // may number new terms, and grow `frequencies`
      length += numbers.length;
      for (const n of numbers) {
        const count = (delta.frequencies[n] as number) + 1;
        delta.frequencies[n] = count;
        if (count === 1) touched.push(n);
      }
    }
    for (const n of touched) {
      (delta.postings[n] as number[]).push(doc * 256 + Math.min(delta.frequencies[n] as number, MAX_TF));
      delta.frequencies[n] = 0;
    }
    delta.postingCount += touched.length;
    this.deltaIds.push(id);
    this.deltaDocs.set(id, doc);
    this.idChars += id.length;
    this.lengths[doc] = length;
    this.live++;
    this.totalLength += length;
    this.background.added(doc, id, length);
    if (delta.postingCount >= MAX_DELTA_POSTINGS) this.compactNow();
  }

  remove(id: string): void {
    const doc = this.docOf(id);
    if (doc === undefined) return;
    if (this.deltaDocs.delete(id)) this.idChars -= id.length;
    this.removed[doc] = 1;
    this.live--;
    this.dead++;
    this.totalLength -= this.lengths[doc] as number;
    this.background.removed(doc, this.lengths[doc] as number);
    // Bounds the memory a long run of replacements leaves behind to about twice the live index.
    if (this.dead >= MIN_DEAD_TO_COMPACT && this.dead > this.live) this.compactNow();
  }

  search(query: string, options: SearchOptions): SearchHit[] {
    const limit = Math.floor(options.limit);
    if (!(limit > 0) || this.live === 0) return [];
    // Background documents left out of the statistics, unless they are all there is.
    const background = this.background.apart(this.base.ids, this.deltaIds, this.removed, this.lengths, this.live);
    // The planner asks held then df of each term: counted once (with dead documents, a scan of its postings).
    const held = new Map<string, number>();
    const heldOf = (term: string): number => {
      let count = held.get(term);
      if (count === undefined) held.set(term, (count = this.df(term)));
      return count;
    };
    const plans = planQuery(
      query,
      {
        termsOf: (token) => this.analyzer.termsOf(token),
        held: heldOf,
        df: (term) => heldOf(term) - (background ? this.backgroundDfOf(term, background.mask) : 0),
        sortedTerms: () => [this.base.terms, this.delta.sortedTerms()],
        docCount: this.live - (background?.live ?? 0),
      },
      { prefix: options.prefix !== false, fuzzy: options.fuzzy !== false },
    );
    if (plans.length === 0) return [];
    const averageLength = (this.totalLength - (background?.length ?? 0)) / (this.live - (background?.live ?? 0)) || 1;
    // A filter asks ids, and only of documents that may rank.
    const idOf = (doc: number): string => this.idOf(doc) as string;
    const collection = {
      count: this.docCount,
      removed: this.removed,
      idOf,
      // Ties are broken by id: a segment's documents by their ids' ranks (no string made, no bytes compared).
      idBefore: (a: number, b: number) => this.idBefore(a, b),
      lengths: this.lengths,
      averageLength,
      filter: options.filter,
      scratch: this.scratch,
    };
    const found = (this.exhaustive ? scoreAll : scoreTopK)(this.scoredWords(plans), collection, limit);
    return found.map(({ doc, score }) => ({ id: idOf(doc), score, doc }));
  }

  compact(): void {
    if (this.delta.terms.length > 0 || this.dead > 0) this.compactNow();
  }

  serialize(headroom = 0): Buffer {
    this.compact();
    return encodeSnapshot(this.base, ENGINE_NAME, headroom);
  }

  /** The estimate bm25-memory.ts describes. */
  bytes(): number {
    const ids = this.deltaIds.length * (STRING_BYTES + SLOT_BYTES) + this.idChars + this.idStrings.madeBytes(STRING_BYTES, SLOT_BYTES);
    const entries = (this.deltaDocs.size + this.background.df.size + this.extremes.size) * MAP_ENTRY_BYTES;
    return (
      EMPTY_INDEX_BYTES +
      segmentBytes(this.base) +
      this.delta.bytes() +
      this.background.maskBytes() +
      this.removed.byteLength +
      this.lengths.byteLength +
      this.scratch.bytes() +
      ids +
      entries
    );
  }

  /**
   * The query's words as the scorer reads them (bm25-scorer.ts): each term with a fresh cursor on its
   * postings and its bound (the largest term frequency and the shortest document among its postings,
   * counted once per segment for a long list, from the added postings each time: they are few).
   */
  private scoredWords(plans: QueryTerm[][]): ScoredTerm[][] {
    return plans.map((plan) =>
      plan.map((term) => {
        const t = this.baseTerm(term.term);
        const delta = this.delta.postingsOf(term.term);
        return {
          ...term,
          cursor: this.cursorAt(t, delta),
          bound: (averageLength: number) => {
            let [maxTf, minLength] = t === undefined ? [0, Number.POSITIVE_INFINITY] : this.baseExtremes(t);
            for (const packed of delta ?? []) {
              maxTf = Math.max(maxTf, packed % 256);
              minLength = Math.min(minLength, this.lengths[Math.floor(packed / 256)] as number);
            }
            return tfBound(maxTf, minLength, averageLength);
          },
        };
      }),
    );
  }

  /** The largest term frequency and the shortest document among a segment term's postings (removed documents too: a bound). */
  private baseExtremes(t: number): [maxTf: number, minLength: number] {
    const cached = this.extremes.get(t);
    if (cached !== undefined) return [cached % 256, Math.floor(cached / 256)];
    const { postings, offsets, lengths } = this.base;
    const cursor = new PostingCursor(postings, offsets[t] as number, offsets[t + 1] as number, undefined);
    let maxTf = 0;
    let minLength = 0xffffffff;
    for (let doc = cursor.next(); doc !== END; doc = cursor.next()) {
      if (cursor.tf > maxTf) maxTf = cursor.tf;
      const length = lengths[doc] as number;
      if (length < minLength) minLength = length;
    }
    // A short list costs less to scan than to remember.
    if ((this.base.df[t] as number) >= EXTREMES_FROM_DF) this.extremes.set(t, minLength * 256 + maxTf);
    return [maxTf, minLength];
  }

  /** The live document of `id`, or undefined. */
  private docOf(id: string): number | undefined {
    const delta = this.deltaDocs.get(id);
    if (delta !== undefined) return delta;
    const doc = findId(this.base.idSlots, this.base.ids, Buffer.from(id, 'utf8'));
    return doc === undefined || this.removed[doc] === 1 ? undefined : doc;
  }

  /** The number of `term` in the segment, or undefined: every reader of its postings finds it here (termOf checks them). */
  private baseTerm(term: string): number | undefined {
    return termOf(this.base, term);
  }

  verify(): void {
    checkPostings(this.base, 0, this.base.postings.length);
  }

  /** Live background documents holding the term (scanned from its postings once, then cached). */
  private backgroundDfOf(term: string, mask: Uint8Array): number {
    const cache = this.background.df;
    let count = cache.get(term);
    if (count === undefined) {
      count = 0;
      const cursor = this.cursorOf(term);
      for (let doc = cursor.next(); doc !== END; doc = cursor.next()) if (mask[doc] === 1 && this.removed[doc] !== 1) count++;
      cache.set(term, count);
    }
    return count;
  }

  /** Live documents holding the term. */
  private df(term: string): number {
    const t = this.baseTerm(term);
    const delta = this.delta.postingsOf(term);
    const total = (t === undefined ? 0 : (this.base.df[t] as number)) + (delta?.length ?? 0);
    if (this.dead === 0 || total === 0) return total;
    let live = 0;
    const cursor = this.cursorAt(t, delta);
    for (let doc = cursor.next(); doc !== END; doc = cursor.next()) if (this.removed[doc] !== 1) live++;
    return live;
  }

  /** A cursor on every posting of the term, dead documents included. */
  private cursorOf(term: string): PostingCursor {
    return this.cursorAt(this.baseTerm(term), this.delta.postingsOf(term));
  }

  /** A cursor on a segment term's postings (`t`, undefined: none), then the term's added ones. */
  private cursorAt(t: number | undefined, delta: readonly number[] | undefined): PostingCursor {
    const { postings, offsets } = this.base;
    return t === undefined ? new PostingCursor(postings, 0, 0, delta) : new PostingCursor(postings, offsets[t] as number, offsets[t + 1] as number, delta);
  }

  private compactNow(): void {
    const { delta } = this;
    this.adopt(
      compact({
        base: this.base,
        deltaTerms: delta.sortedTerms(),
        deltaPostings: (term) => delta.postingsOf(term),
        deltaPostingCount: delta.postingCount,
        deltaIds: this.deltaIds,
        dead: this.removed,
        lengths: this.lengths,
      }),
    );
  }

  /** Makes `segment` the whole index: no delta, no dead documents. */
  private adopt(segment: Segment): void {
    const { ids } = segment;
    this.base = segment;
    this.delta.reset();
    this.idChars = 0;
    this.deltaIds = [];
    this.removed = new Uint8Array(ids.length + 16);
    this.lengths = grown(segment.lengths, ids.length + 1);
    this.deltaDocs.clear();
    this.numbering++;
    this.idStrings = new IdStrings(ids, ID_STRINGS_KEPT);
    this.live = ids.length;
    this.dead = 0;
    this.totalLength = segment.totalLength;
    // Compaction renumbers documents: the mask is built again when next needed.
    this.background.reset();
    this.extremes.clear();
  }
}
