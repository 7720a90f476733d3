/**
 * The port to a full-text engine. The core (recall/) talks to this and never names an engine, the
 * way it talks to storage and the LLM through theirs.
 *
 * Contract:
 * - Documents are identified by an opaque string id; `add` of an id already present replaces it.
 * - `remove` of a missing id is a no-op.
 * - `search` ranks by BM25 (or better) over the analysed terms of the query; `filter` is asked
 *   before scoring, so filtered-out documents cost nothing but the callback.
 * - `serialize` returns a self-contained buffer; `load` of that buffer answers every search the
 *   same, and throws `CorruptIndexError` on any buffer it did not write (truncated, altered,
 *   another version): an index is derived data, rebuilt rather than trusted. A part that a search
 *   reads a piece at a time may be checked as it is first read instead: `search` (and `serialize`,
 *   `compact`) then throw `CorruptIndexError` when it is damaged, before any answer is made of it,
 *   and the owner rebuilds the index; `verify` checks every such part at once.
 */
export interface SearchHit {
  id: string;
  score: number;
  /**
   * The engine's number for the document, when it has one: the same document keeps it until the
   * index's `numbering` changes, so a caller may keep what it works out per document in an array by
   * it (one read per candidate, where a Map keyed by id costs a hash lookup each).
   */
  doc?: number;
}

export interface SearchOptions {
  /** Most hits returned, best first. */
  limit: number;
  /** Asked before scoring; false drops the document. */
  filter?: (id: string) => boolean;
  /** Query terms also match index terms they start (default true; only for terms of 3+ characters). */
  prefix?: boolean;
  /** Query terms also match index terms one or two edits away (default true; only for terms of 5+ characters). */
  fuzzy?: boolean;
}

export interface TextIndex {
  readonly size: number;
  /** Changes whenever documents are numbered anew (SearchHit.doc): numbers seen before mean nothing after. */
  readonly numbering: number;
  has(id: string): boolean;
  /** The id of the document numbered `doc` (SearchHit.doc, under the current `numbering`), undefined when removed or never numbered. */
  idAt?(doc: number): string | undefined;
  add(id: string, text: string): void;
  remove(id: string): void;
  search(query: string, options: SearchOptions): SearchHit[];
  /**
   * Every id in the index (any order), or those that start with `prefix`, as of the call: a caller may
   * add and remove while iterating. With a prefix, the others cost the engine no string.
   */
  ids(prefix?: string): IterableIterator<string>;
  /**
   * What `load` had to compute again instead of reading it — a damaged or missing part the rest
   * rebuilds alone, or an older format read — by name; empty for a sound snapshot of the current
   * format and for an index not loaded. A caller writes a new snapshot when it is not empty.
   */
  readonly rebuilt: readonly string[];
  /**
   * `headroom` bytes (a multiple of 8) are left free at the start of the buffer returned, the
   * snapshot after them: a caller that frames it writes its own bytes there instead of copying the
   * whole snapshot into a bigger buffer; `load` is then given the part after the headroom.
   */
  serialize(headroom?: number): Buffer;
  /** Packs what was added since the last compaction into the compact form a loaded snapshot has (less memory, same answers). */
  compact(): void;
  /** Checks what `load` left to be checked when first read; throws CorruptIndexError if any of it is damaged. */
  verify(): void;
  /**
   * An estimate of the memory the index holds, in bytes (its typed arrays exactly, its strings,
   * arrays and maps by V8's per-entry costs): what a memory budget counts (recall-service.ts).
   */
  bytes(): number;
}

export interface IndexOptions {
  /**
   * When set, only documents whose id starts with one of these count in the statistics that weigh
   * words (how many documents there are, how many hold a term, their average length); the others, the
   * background, are searched like any other. Text derived from other documents (a summary, a digest)
   * repeats their words, and counted in would change how those documents rank among themselves once
   * it is added. Prefixes of ids, not a predicate: a loaded snapshot tells its documents apart by
   * their ids' first bytes, without making a string of each.
   */
  countedPrefixes?: readonly string[];
}

export interface TextIndexEngine {
  /** A short name for logs and snapshot headers, e.g. "bm25-v1". */
  readonly name: string;
  create(options?: IndexOptions): TextIndex;
  /** Throws CorruptIndexError when the buffer is not a whole, valid snapshot of this engine. */
  load(buffer: Buffer, options?: IndexOptions): TextIndex;
}

export class CorruptIndexError extends Error {
  override readonly name = 'CorruptIndexError';
}
