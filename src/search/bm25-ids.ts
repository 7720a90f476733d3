/**
 * A segment's document ids as a snapshot holds them: their UTF-8 bytes end to end, with where each
 * ends, and a hash table over them. Nothing is decoded when a snapshot loads: an id becomes a string
 * only when asked for (a hit, a filtered candidate), and a lookup compares bytes. At a million notes,
 * slicing every id at load took a tenth of a new process's first search and 100 MB of heap, and
 * building the table another sixth: the table is stored, ready, beside the ids.
 */

export class IdList {
  /** `bytes` holds the ids' UTF-8 end to end; id i ends at byte `ends[i]`. */
  constructor(
    readonly bytes: Buffer,
    readonly ends: Uint32Array,
  ) {}

  get length(): number {
    return this.ends.length;
  }

  start(doc: number): number {
    return doc === 0 ? 0 : (this.ends[doc - 1] as number);
  }

  get(doc: number): string {
    return this.bytes.toString('utf8', this.start(doc), this.ends[doc]);
  }

  /**
   * Whether id `a` sorts before id `b` as strings do (UTF-16 code units), read off their bytes: UTF-8
   * orders as code points, which differ from UTF-16 units only between a character above U+FFFF and
   * one from U+E000 (leading bytes F0–F4 against EE–EF): such a pair is decoded and compared.
   */
  before(a: number, b: number): boolean {
    const { bytes } = this;
    const endA = this.ends[a] as number;
    const endB = this.ends[b] as number;
    let i = this.start(a);
    let j = this.start(b);
    for (; i < endA && j < endB; i++, j++) {
      const x = bytes[i] as number;
      const y = bytes[j] as number;
      if (x === y) continue;
      return x >= 0xee && y >= 0xee ? this.get(a) < this.get(b) : x < y;
    }
    return endA - i < endB - j;
  }

  /** Whether id `doc` is exactly these UTF-8 bytes. */
  is(doc: number, key: Uint8Array): boolean {
    const start = this.start(doc);
    if ((this.ends[doc] as number) - start !== key.length) return false;
    const { bytes } = this;
    for (let i = key.length - 1; i >= 0; i--) if (bytes[start + i] !== key[i]) return false; // ids differ most at their end
    return true;
  }

  /** Whether id `doc` starts with these UTF-8 bytes. */
  startsWith(doc: number, prefix: Uint8Array): boolean {
    const start = this.start(doc);
    if ((this.ends[doc] as number) - start < prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (this.bytes[start + i] !== prefix[i]) return false;
    return true;
  }

  /** Whether id `doc` starts with any of these (a plain loop: asked of every document when a snapshot loads). */
  startsWithAny(doc: number, prefixes: readonly Uint8Array[]): boolean {
    for (let p = 0; p < prefixes.length; p++) if (this.startsWith(doc, prefixes[p] as Uint8Array)) return true;
    return false;
  }

  hash(doc: number): number {
    return hashBytes(this.bytes, this.start(doc), this.ends[doc] as number);
  }

  static of(ids: readonly string[]): IdList {
    const builder = new IdListBuilder(
      ids.length,
      ids.reduce((sum, id) => sum + Buffer.byteLength(id, 'utf8'), 0),
    );
    for (const id of ids) builder.addString(id);
    return builder.done();
  }
}

/** Writes an IdList whose size is known: ids copied from another list's bytes, or encoded from strings. */
export class IdListBuilder {
  private readonly bytes: Buffer;
  private readonly ends: Uint32Array;
  private count = 0;
  private at = 0;

  constructor(ids: number, byteLength: number) {
    this.bytes = Buffer.alloc(byteLength);
    this.ends = new Uint32Array(ids);
  }

  addFrom(list: IdList, doc: number): void {
    this.at += list.bytes.copy(this.bytes, this.at, list.start(doc), list.ends[doc]);
    this.ends[this.count++] = this.at;
  }

  addString(id: string): void {
    this.at += this.bytes.write(id, this.at, 'utf8');
    this.ends[this.count++] = this.at;
  }

  done(): IdList {
    if (this.count !== this.ends.length || this.at !== this.bytes.length) throw new Error('id list built short of its size');
    return new IdList(this.bytes, this.ends);
  }
}

/**
 * FNV-1a over the byte length and the last HASHED_BYTES bytes: the end is what tells ids apart (a
 * note's id ends with its name's random part). A stored table depends on it: changing it changes the
 * id table's section version (bm25-snapshot.ts).
 */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = Math.imul(0x811c9dc5 ^ (end - start), 0x01000193);
  for (let i = Math.max(start, end - HASHED_BYTES); i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}
const HASHED_BYTES = 20;

/** Slots for `count` keys: a power of two at least twice as many (so probes stay short). */
export function tableSize(count: number): number {
  let size = 16;
  while (size < count * 2) size *= 2;
  return size;
}

/** The id table of `list`: each id's document number + 1 (0 empty) at its hash, linear probing. */
export function idTable(list: IdList): Int32Array {
  const slots = new Int32Array(tableSize(list.length));
  const mask = slots.length - 1;
  for (let doc = 0; doc < list.length; doc++) {
    let slot = list.hash(doc) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = doc + 1;
  }
  return slots;
}

/**
 * Each id's rank among the list's ids in string order (UTF-16 code units, as `<` compares): ties
 * between equal scores are broken by it, one integer comparison instead of the ids' bytes (a search
 * with a pool of 200 over a common word compares hundreds of tied documents). Ids are mostly indexed
 * in order already, which a merge sort finds in about one comparison per id.
 */
export function idRanks(list: IdList): Int32Array {
  const order = Array.from({ length: list.length }, (_, doc) => doc).sort((a, b) => (a === b ? 0 : list.before(a, b) ? -1 : 1));
  const ranks = new Int32Array(list.length);
  for (let rank = 0; rank < order.length; rank++) ranks[order[rank] as number] = rank;
  return ranks;
}

/** The document whose id is `key` (UTF-8) by the list's table, or undefined. */
export function findId(slots: Int32Array, list: IdList, key: Uint8Array): number | undefined {
  const mask = slots.length - 1;
  for (let slot = hashBytes(key, 0, key.length) & mask; ; slot = (slot + 1) & mask) {
    const entry = slots[slot] as number;
    if (entry === 0) return undefined;
    if (list.is(entry - 1, key)) return entry - 1;
  }
}

/**
 * A segment's ids made strings (hits, filtered candidates), by document number: a candidate recurs
 * from query to query, and handing out the same string each time spares decoding it again, and
 * spares whoever keys a Map by it (recall's descriptions, places, re-ranking) hashing it again (V8
 * keeps a string's hash in the string). Bounded: past `limit` strings, all are dropped. One per
 * segment: a compaction renumbers.
 */
export class IdStrings {
  /** Filled, not holey (see TermList): by document number, so a candidate's id is one array read. Created on the first ask. */
  private made: (string | undefined)[] | undefined;
  private count = 0;
  private chars = 0;

  constructor(
    private readonly list: IdList,
    private readonly limit: number,
  ) {}

  get(doc: number): string {
    const made = (this.made ??= new Array<string | undefined>(this.list.length).fill(undefined));
    let id = made[doc];
    if (id === undefined) {
      id = this.list.get(doc);
      if (this.count >= this.limit) {
        made.fill(undefined);
        this.count = 0;
        this.chars = 0;
      }
      made[doc] = id;
      this.count++;
      this.chars += id.length;
    }
    return id;
  }

  /** What the strings made hold (`bytes` estimates), in string headers, characters and slots. */
  madeBytes(stringBytes: number, slotBytes: number): number {
    return (this.made?.length ?? 0) * slotBytes + this.chars + this.count * stringBytes;
  }
}
