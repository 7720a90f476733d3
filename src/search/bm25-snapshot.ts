/**
 * The binary snapshot of a segment, a file of sections (shared/sections.ts) a new process uses in
 * place: typed-array views on the buffer, the ids left as bytes (bm25-ids.ts), the hash tables of
 * ids and terms stored ready. Loading is a check of each section's CRC-32 (about 2 GB/s on a shared
 * VM): no parsing per posting, per document or per term. The postings, of which a search reads only
 * its terms', are checked by blocks of POSTING_BLOCK_BYTES as a term's are first read (the segment's
 * `postingsSound`, asked by bm25.ts), the rest at load: at a million notes they are 48 of the 162 MB.
 * A damaged block is found when a term in it is first asked for (the index then throws
 * CorruptIndexError, and its owner rebuilds it from the store), or by `verify`, which checks them all.
 *
 * Sections (format 2; arrays in the machine's order, as the file's byte-order marker says):
 *   meta        u32 docs | u32 terms | u32 engine-name bytes | u32 0 | f64 sum of lengths | name (UTF-8)
 *   id-ends     Uint32 [docs]: where each id's UTF-8 ends in `ids`
 *   ids         the ids' UTF-8 end to end (cut by offsets: an id is opaque and may hold any character)
 *   lengths     Uint32 [docs]: each document's length in terms
 *   term-ends   Uint32 [terms]: where each term's UTF-8 ends in `terms`
 *   terms       the sorted terms' UTF-8 end to end (made strings one at a time, when a search asks: bm25-terms.ts)
 *   df          Uint32 [terms]
 *   offsets     Uint32 [terms + 1]: where each term's postings start in `postings`
 *   postings    varint-packed (bm25-segment.ts)
 *   postings~crc  a CRC-32 per 64 KiB block of the postings (shared/sections.ts); a reader without it checks them whole
 *   id-table    Int32 slots (bm25-ids.ts idTable)        — derived: rebuilt alone when damaged
 *   id-ranks    Int32 [docs] (bm25-ids.ts idRanks)       — derived: rebuilt alone when damaged or missing
 *   term-table  Int32 slots (bm25-segment.ts termTable)   — derived: rebuilt alone when damaged
 * A damaged section among the first nine is the index itself: the snapshot is refused (the postings: when read)
 * (CorruptIndexError) and the caller rebuilds it from the store. A damaged, missing or older table is
 * computed again from what it indexes, and `rebuilt` says so. Format 1 (one SHA-256 over the whole,
 * ids as one string, no tables) is still read.
 */
import { createHash } from 'node:crypto';
import { alignedCopy, hasMagic, readSections, type Section, type SectionSource, writeSections } from '../shared/sections.js';
import { IdList, idRanks, idTable, tableSize } from './bm25-ids.js';
import { checkPostings, type Segment, termTable } from './bm25-segment.js';
import { TermList } from './bm25-terms.js';
import { CorruptIndexError } from './types.js';

const MAGIC = Buffer.from('LMFTSIDX', 'latin1');
export const FORMAT_VERSION = 2;
/** Each section's version: a table's changes with its hash function. */
const SECTION_VERSION = 1;
const ID_TABLE_VERSION = 1;
const ID_RANKS_VERSION = 1;
const TERM_TABLE_VERSION = 1;
const META_BYTES = 24;
/** A posting block's checksum covers this many bytes: a rare term's postings are checked in one, a common term's in a few dozen. */
const POSTING_BLOCK_BYTES = 64 * 1024;

/** A segment as loaded, with the sections that had to be computed again (damaged, missing, an older format). */
export interface LoadedSegment {
  segment: Segment;
  rebuilt: string[];
}

const fail = (why: string): never => {
  throw new CorruptIndexError(`search index snapshot rejected: ${why}`);
};

const arraySection = (name: string, array: Uint32Array | Int32Array, version = SECTION_VERSION): SectionSource => ({
  name,
  version,
  bytes: array.byteLength,
  write: (into) => new Uint8Array(into.buffer, into.byteOffset, array.byteLength).set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength)),
});
const bytesSection = (name: string, bytes: Uint8Array): SectionSource => ({
  name,
  version: SECTION_VERSION,
  bytes: bytes.length,
  write: (into) => into.set(bytes),
});

/** The snapshot of `segment`, after `headroom` free bytes (a multiple of 8: the arrays stay aligned). */
export function encodeSnapshot(segment: Segment, engine: string, headroom = 0): Buffer {
  checkPostings(segment, 0, segment.postings.length); // a damaged block is never written under a fresh checksum
  const name = Buffer.from(engine, 'utf8');
  const meta: SectionSource = {
    name: 'meta',
    version: SECTION_VERSION,
    bytes: META_BYTES + name.length,
    write: (into) => {
      into.writeUInt32LE(segment.ids.length, 0);
      into.writeUInt32LE(segment.terms.length, 4);
      into.writeUInt32LE(name.length, 8);
      into.writeDoubleLE(segment.totalLength, 16);
      name.copy(into, META_BYTES);
    },
  };
  return writeSections(
    MAGIC,
    FORMAT_VERSION,
    [
      meta,
      arraySection('id-ends', segment.ids.ends),
      bytesSection('ids', segment.ids.bytes),
      arraySection('lengths', segment.lengths),
      arraySection('term-ends', segment.terms.ends),
      bytesSection('terms', segment.terms.bytes),
      arraySection('df', segment.df),
      arraySection('offsets', segment.offsets),
      { ...bytesSection('postings', segment.postings), blocks: POSTING_BLOCK_BYTES },
      arraySection('id-table', segment.idSlots, ID_TABLE_VERSION),
      arraySection('id-ranks', segment.idRanks, ID_RANKS_VERSION),
      arraySection('term-table', segment.termSlots, TERM_TABLE_VERSION),
    ],
    { headroom },
  );
}

/**
 * The segment in `input`, as views on it (the buffer must not be changed afterwards), with what
 * had to be rebuilt. Throws CorruptIndexError unless the index itself is whole and unaltered.
 */
export function decodeSnapshot(input: Buffer, engine: string): LoadedSegment {
  if (input.length < 12 || !hasMagic(input, MAGIC)) fail('not a search index snapshot (bad magic)');
  const version = input.readUInt32LE(8);
  if (version === 1) return { segment: decodeVersion1(input, engine), rebuilt: ['format-1'] };
  if (version !== FORMAT_VERSION) fail(`format version ${version}, this code reads versions 1 and ${FORMAT_VERSION}`);
  let sections: Map<string, Section>;
  try {
    sections = readSections(input, MAGIC).sections;
  } catch (error) {
    return fail((error as Error).message);
  }
  /** A section of the index itself, checked now unless `later` (then by its reader, as it reads it). */
  const part = (name: string, later = false): Buffer => {
    const section = sections.get(name);
    if (!section) return fail(`no ${name} section`);
    if (section.version !== SECTION_VERSION) fail(`${name} section version ${section.version}`);
    if (!later && !section.sound()) fail(`${name} section damaged (checksum mismatch)`);
    return section.bytes;
  };
  const u32 = (bytes: Buffer, count: number, what: string): Uint32Array => {
    if (bytes.length !== count * 4) fail(`${what} holds ${bytes.length} bytes, not ${count * 4}`);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  };

  const meta = part('meta');
  if (meta.length < META_BYTES) fail('meta section too short');
  const docs = meta.readUInt32LE(0);
  const termCount = meta.readUInt32LE(4);
  const nameBytes = meta.readUInt32LE(8);
  if (META_BYTES + nameBytes !== meta.length) fail('meta section size');
  const name = meta.toString('utf8', META_BYTES, META_BYTES + nameBytes);
  if (name !== engine) fail(`written by engine "${name}", not "${engine}"`);

  const ends = u32(part('id-ends'), docs, 'id-ends');
  const idBytes = part('ids');
  if ((docs > 0 ? ends[docs - 1] : 0) !== idBytes.length) fail('id offsets do not match the ids');
  const lengths = u32(part('lengths'), docs, 'lengths');
  const termEnds = u32(part('term-ends'), termCount, 'term-ends');
  const termBytes = part('terms');
  if ((termCount > 0 ? termEnds[termCount - 1] : 0) !== termBytes.length) fail('term offsets do not match the terms');
  const terms = new TermList(termBytes, termEnds);
  const df = u32(part('df'), termCount, 'df');
  const offsets = u32(part('offsets'), termCount + 1, 'offsets');
  const postingBytes = part('postings', true);
  const postingSection = sections.get('postings') as Section;
  if (offsets[termCount] !== postingBytes.length) fail('postings offsets do not end at the postings size');
  const postings = new Uint8Array(postingBytes.buffer, postingBytes.byteOffset, postingBytes.length);
  const ids = new IdList(idBytes, ends);

  const rebuilt: string[] = [];
  /** A derived table as stored when sound and of this version and size, else computed again (and said). */
  const table = (section: string, version: number, length: number, compute: () => Int32Array): Int32Array => {
    const stored = sections.get(section);
    if (stored && stored.version === version && stored.bytes.length === length * 4 && stored.sound())
      return new Int32Array(stored.bytes.buffer, stored.bytes.byteOffset, length);
    rebuilt.push(section);
    return compute();
  };
  const idSlots = table('id-table', ID_TABLE_VERSION, tableSize(docs), () => idTable(ids));
  const ranks = table('id-ranks', ID_RANKS_VERSION, docs, () => idRanks(ids));
  const termSlots = table('term-table', TERM_TABLE_VERSION, tableSize(termCount), () => termTable(terms));
  const totalLength = meta.readDoubleLE(16);
  const postingsSound = (from: number, to: number) => postingSection.soundAt(from, to);
  // A damaged companion is not trusted (the postings are then checked whole): written sound again.
  if (sections.get('postings~crc')?.sound() === false) rebuilt.push('postings~crc');
  return { segment: { ids, idSlots, idRanks: ranks, lengths, totalLength, terms, df, offsets, postings, termSlots, postingsSound }, rebuilt };
}

/**
 * A snapshot of format 1 (written before sections): ids cut from one string by UTF-16 offsets, no
 * tables, a SHA-256 of the whole. Still read, so a new release finds its index; the caller writes it
 * again in the current format.
 */
const BYTE_ORDER_MARKER = 0x01020304;
const DIGEST_BYTES = 32;
const PREAMBLE_BYTES = 24;
const HEADER_WORDS = 5;
const pad4 = (n: number): number => (n + 3) & ~3;

function decodeVersion1(input: Buffer, engine: string): Segment {
  if (input.length < PREAMBLE_BYTES + HEADER_WORDS * 4 + DIGEST_BYTES) fail(`${input.length} bytes is too short to be a snapshot`);
  const total = input.readUInt32LE(16);
  if (total !== input.length) fail(`${input.length} bytes where the header says ${total} (truncated or extended)`);
  const expected = digest(input.subarray(0, total - DIGEST_BYTES));
  if (!expected.equals(input.subarray(total - DIGEST_BYTES))) fail('checksum mismatch (the snapshot was altered)');

  // Typed-array views need 4-byte alignment; a Buffer sliced from a pool may not have it (a caller
  // framing the snapshot keeps it aligned, so a snapshot read whole is used in place, not copied).
  const buffer = input.byteOffset % 4 === 0 ? input : alignedCopy(input);
  if (new Uint32Array(buffer.buffer, buffer.byteOffset + 12, 1)[0] !== BYTE_ORDER_MARKER) fail('written on a machine of the other byte order');
  const nameBytes = buffer.readUInt32LE(20);
  const headerStart = PREAMBLE_BYTES + pad4(nameBytes);
  if (headerStart + HEADER_WORDS * 4 > total) fail('engine name overruns the snapshot');
  const name = buffer.toString('utf8', PREAMBLE_BYTES, PREAMBLE_BYTES + nameBytes);
  if (name !== engine) fail(`written by engine "${name}", not "${engine}"`);
  const [docs, termCount, idBytes, termBytes, postingBytes] = Array.from({ length: HEADER_WORDS }, (_, i) => buffer.readUInt32LE(headerStart + i * 4)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const arraysStart = headerStart + HEADER_WORDS * 4;
  const blobsStart = arraysStart + 4 * (2 * docs + 2 * termCount + 1);
  if (blobsStart + pad4(idBytes) + pad4(termBytes) + pad4(postingBytes) + DIGEST_BYTES !== total) fail('section sizes do not add up');

  let at = arraysStart;
  const u32 = (count: number): Uint32Array => {
    const view = new Uint32Array(buffer.buffer, buffer.byteOffset + at, count);
    at += count * 4;
    return view;
  };
  const idEnds = u32(docs);
  const lengths = u32(docs);
  const df = u32(termCount);
  const offsets = u32(termCount + 1);
  const joinedIds = buffer.toString('utf8', at, at + idBytes);
  at += pad4(idBytes);
  const terms = termCount === 0 ? [] : buffer.toString('utf8', at, at + termBytes).split('\n');
  at += pad4(termBytes);
  const postings = new Uint8Array(buffer.buffer, buffer.byteOffset + at, postingBytes);

  if (terms.length !== termCount) fail(`${terms.length} terms where the header says ${termCount}`);
  if (offsets[termCount] !== postingBytes) fail('postings offsets do not end at the postings size');
  if ((docs > 0 ? idEnds[docs - 1] : 0) !== joinedIds.length) fail('id offsets do not match the ids');
  const ids = new Array<string>(docs);
  let start = 0;
  for (let doc = 0; doc < docs; doc++) {
    const end = idEnds[doc] as number;
    ids[doc] = joinedIds.slice(start, end);
    start = end;
  }
  const list = IdList.of(ids);
  const termList = TermList.of(terms);
  const totalLength = lengths.reduce((sum, length) => sum + length, 0);
  return {
    ids: list,
    idSlots: idTable(list),
    idRanks: idRanks(list),
    lengths,
    totalLength,
    terms: termList,
    df,
    offsets,
    postings,
    termSlots: termTable(termList),
  };
}

function digest(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}
