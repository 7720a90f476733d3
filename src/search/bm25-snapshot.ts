/**
 * The binary snapshot of a segment. Built so `load` is a checksum, two string decodes and a few
 * typed-array views: no parsing per posting.
 *
 * Layout (header integers little-endian, arrays in the machine's order, checked by a marker):
 *   magic "LMFTSIDX" | u32 format version | u32 byte-order marker | u32 total bytes
 *   | u32 engine-name bytes | engine name (UTF-8, padded to 4)
 *   | u32 docs | u32 terms | u32 id bytes | u32 term bytes | u32 postings bytes
 *   | Uint32 id ends (UTF-16 offsets in the joined ids) [docs] | Uint32 doc lengths [docs]
 *   | Uint32 df [terms] | Uint32 postings offsets [terms + 1]
 *   | ids joined without separator, UTF-8 (padded) | terms joined by "\n", UTF-8 (padded)
 *   | postings (padded) | SHA-256 of everything before it (32 bytes)
 * Ids are cut by offsets, not split on a separator, because an id is opaque and may hold any character.
 */
import { createHash } from 'node:crypto';
import { CorruptIndexError } from './types.js';
import type { Segment } from './bm25-segment.js';

const MAGIC = Buffer.from('LMFTSIDX', 'latin1');
export const FORMAT_VERSION = 1;
const BYTE_ORDER_MARKER = 0x01020304;
const DIGEST_BYTES = 32;
const PREAMBLE_BYTES = 24;
const HEADER_WORDS = 5;

const pad4 = (n: number): number => (n + 3) & ~3;
const ID_CHUNK = 4_096;

/** The snapshot of `segment`, after `headroom` free bytes (a multiple of 8: the arrays stay aligned). */
export function encodeSnapshot(segment: Segment, engine: string, headroom = 0): Buffer {
  if (headroom % 8 !== 0) throw new RangeError(`snapshot headroom ${headroom} is not a multiple of 8`);
  const name = Buffer.from(engine, 'utf8');
  // Ids are encoded a chunk at a time, straight into the output: joined and encoded whole, a
  // million of them held two more copies of 67 MB at the peak of a build.
  let idBytes = 0;
  for (const chunk of idChunks(segment.ids)) idBytes += Buffer.byteLength(chunk, 'utf8');
  const terms = Buffer.from(segment.terms.join('\n'), 'utf8');
  const docs = segment.ids.length;
  const termCount = segment.terms.length;
  const idEnds = new Uint32Array(docs);
  let end = 0;
  segment.ids.forEach((id, doc) => (idEnds[doc] = end += id.length));

  const arrays = [idEnds, segment.lengths, segment.df, segment.offsets];
  const blobs = [terms, segment.postings];
  const headerStart = PREAMBLE_BYTES + pad4(name.length);
  const arraysStart = headerStart + HEADER_WORDS * 4;
  const blobsStart = arraysStart + arrays.reduce((sum, a) => sum + a.byteLength, 0);
  const total = blobsStart + pad4(idBytes) + blobs.reduce((sum, b) => sum + pad4(b.length), 0) + DIGEST_BYTES;

  // Never pooled (Buffer.alloc), so byteOffset is 0 and the typed-array views below are aligned.
  const whole = Buffer.alloc(headroom + total);
  const out = whole.subarray(headroom);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(FORMAT_VERSION, 8);
  new Uint32Array(out.buffer, out.byteOffset + 12, 1)[0] = BYTE_ORDER_MARKER;
  out.writeUInt32LE(total, 16);
  out.writeUInt32LE(name.length, 20);
  name.copy(out, PREAMBLE_BYTES);
  [docs, termCount, idBytes, terms.length, segment.postings.length].forEach((value, i) => out.writeUInt32LE(value, headerStart + i * 4));
  let at = arraysStart;
  for (const array of arrays) {
    new Uint32Array(out.buffer, out.byteOffset + at, array.length).set(array);
    at += array.byteLength;
  }
  let idsAt = at;
  for (const chunk of idChunks(segment.ids)) idsAt += out.write(chunk, idsAt, 'utf8');
  at += pad4(idBytes);
  for (const blob of blobs) {
    out.set(blob, at);
    at += pad4(blob.length);
  }
  digest(out.subarray(0, total - DIGEST_BYTES)).copy(out, total - DIGEST_BYTES);
  return whole;
}

function* idChunks(ids: readonly string[]): Generator<string> {
  for (let i = 0; i < ids.length; i += ID_CHUNK) yield ids.slice(i, i + ID_CHUNK).join('');
}

/**
 * The segment in `input`, as views on it (the buffer must not be changed afterwards).
 * Throws CorruptIndexError unless it is a whole, unaltered snapshot of this format and engine.
 */
export function decodeSnapshot(input: Buffer, engine: string): Segment {
  const fail = (why: string): never => {
    throw new CorruptIndexError(`search index snapshot rejected: ${why}`);
  };
  if (input.length < PREAMBLE_BYTES + HEADER_WORDS * 4 + DIGEST_BYTES) fail(`${input.length} bytes is too short to be a snapshot`);
  if (!input.subarray(0, MAGIC.length).equals(MAGIC)) fail('not a search index snapshot (bad magic)');
  const version = input.readUInt32LE(8);
  if (version !== FORMAT_VERSION) fail(`format version ${version}, this code reads version ${FORMAT_VERSION}`);
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
  return { ids, lengths, terms, df, offsets, postings };
}

function alignedCopy(input: Buffer): Buffer {
  const copy = Buffer.alloc(input.length); // never pooled, so it starts its own ArrayBuffer
  input.copy(copy);
  return copy;
}

function digest(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}
