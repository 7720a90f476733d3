/**
 * A binary file of named sections, each with its own version and checksum, laid out so a reader
 * uses it in place: what the search index's snapshots are made of (the engine's and the frame
 * around it). A reader checks the table, then each section only when it is used, so a damaged
 * section costs that section alone — a reader that can rebuild it (a hash table from the ids it
 * indexes, embeddings from the documents) does, and keeps the rest — and a section added later is
 * one more entry that older readers skip.
 *
 * Layout (little-endian; arrays inside sections in the machine's order, hence the byte-order marker):
 *   magic (8 bytes) | u32 format version (the owner's) | u32 byte-order marker | u32 sections
 *   | u32 total bytes | u32 CRC-32 of the table | u32 reserved
 *   | table, 40 bytes a section: name (16 bytes, ASCII, NUL-padded) | u32 version | u32 flags
 *     | u32 offset | u32 bytes | u32 CRC-32 of the bytes | u32 reserved
 *   | the sections, each starting 8-byte aligned from the start of the file
 *
 * CRC-32 (zlib's), not a cryptographic digest: it is there to catch a torn or flipped file, not an
 * adversary (who could write any snapshot whole), and SHA-256 over a 138 MB index was a sixth of a new
 * process's first search at a million notes.
 */
import zlib from 'node:zlib';

const BYTE_ORDER_MARKER = 0x01020304;
const HEADER_BYTES = 32;
const ENTRY_BYTES = 40;
const NAME_BYTES = 16;
/** The section's bytes are under its checksum (else the section checks itself: a nested file of sections). */
const CHECKED = 1;

export class DamagedSectionsError extends Error {
  override readonly name = 'DamagedSectionsError';
}

/** A section to write: its size first (the file is allocated once), then its bytes, written in place. */
export interface SectionSource {
  name: string;
  version: number;
  bytes: number;
  write(into: Buffer): void;
  /** False for a section that checks itself (another file of sections): not checksummed twice. */
  checksum?: boolean;
}

export interface Section {
  readonly name: string;
  readonly version: number;
  /** A view of the file (not a copy), 8-byte aligned. */
  readonly bytes: Buffer;
  /** Whether the bytes match their checksum: computed on the first call, then remembered. */
  sound(): boolean;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** A last section made by its owner in a buffer of its own, with room before it for the rest (no copy of a big section). */
export interface LastSection {
  name: string;
  version: number;
  /** A buffer whose first `headroom` bytes are free, the section's bytes after them (a multiple of 8). */
  make(headroom: number): Buffer;
  checksum?: boolean;
}

/**
 * The file of `sections`, after `headroom` free bytes (a multiple of 8) for a caller that frames it
 * in turn, in one buffer. A `last` section is written by its owner (a file of sections itself: an
 * index's engine), the others into the room it leaves.
 */
export function writeSections(
  magic: Buffer,
  formatVersion: number,
  sections: readonly SectionSource[],
  options: { headroom?: number; last?: LastSection } = {},
): Buffer {
  const { headroom = 0, last } = options;
  if (magic.length !== 8) throw new RangeError('a sections magic is 8 bytes');
  if (headroom % 8 !== 0) throw new RangeError(`sections headroom ${headroom} is not a multiple of 8`);
  const count = sections.length + (last ? 1 : 0);
  const offsets: number[] = [];
  let end = HEADER_BYTES + count * ENTRY_BYTES;
  for (const section of sections) {
    end = align8(end);
    offsets.push(end);
    end += section.bytes;
  }
  end = align8(end);
  // Never pooled (Buffer.alloc), so byteOffset is 0 and views on the sections stay aligned.
  const whole = last ? last.make(headroom + end) : Buffer.alloc(headroom + end);
  const out = whole.subarray(headroom);
  const total = out.length;
  if (total > 0xffffffff) throw new RangeError(`${total} bytes is more than a file of sections holds (4 GiB)`);
  magic.copy(out, 0);
  out.writeUInt32LE(formatVersion, 8);
  new Uint32Array(out.buffer, out.byteOffset + 12, 1)[0] = BYTE_ORDER_MARKER;
  out.writeUInt32LE(count, 16);
  out.writeUInt32LE(total, 20);
  const entry = (i: number, name: string, version: number, offset: number, bytes: Buffer, checked: boolean) => {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    if (name.length > NAME_BYTES || !/^[\x21-\x7e]+$/.test(name)) throw new RangeError(`bad section name '${name}'`);
    out.write(name, at, 'latin1');
    out.writeUInt32LE(version, at + 16);
    out.writeUInt32LE(checked ? CHECKED : 0, at + 20);
    out.writeUInt32LE(offset, at + 24);
    out.writeUInt32LE(bytes.length, at + 28);
    out.writeUInt32LE(checked ? crc32(bytes) : 0, at + 32);
  };
  sections.forEach((section, i) => {
    const offset = offsets[i] as number;
    const bytes = out.subarray(offset, offset + section.bytes);
    section.write(bytes);
    entry(i, section.name, section.version, offset, bytes, section.checksum !== false);
  });
  if (last) entry(sections.length, last.name, last.version, end, out.subarray(end), last.checksum !== false);
  out.writeUInt32LE(crc32(out.subarray(HEADER_BYTES, HEADER_BYTES + count * ENTRY_BYTES)), 24);
  return whole;
}

/** Whether `buffer` starts with this magic (a file of sections, or some older format of the same owner). */
export const hasMagic = (buffer: Buffer, magic: Buffer): boolean => buffer.length >= magic.length && buffer.subarray(0, magic.length).equals(magic);

/**
 * The sections of a file, by name, with the format version. Throws DamagedSectionsError when the file
 * itself is not whole (bad magic, truncated or extended, a damaged table, sections out of bounds);
 * a section's own bytes are checked only when the caller asks (`sound`).
 */
export function readSections(input: Buffer, magic: Buffer): { version: number; sections: Map<string, Section> } {
  const fail = (why: string): never => {
    throw new DamagedSectionsError(why);
  };
  if (input.length < HEADER_BYTES) fail(`${input.length} bytes is too short`);
  if (!hasMagic(input, magic)) fail('bad magic');
  const total = input.readUInt32LE(20);
  if (total !== input.length) fail(`${input.length} bytes where the header says ${total} (truncated or extended)`);
  const count = input.readUInt32LE(16);
  const tableEnd = HEADER_BYTES + count * ENTRY_BYTES;
  if (tableEnd > total) fail('the table of sections overruns the file');
  if (crc32(input.subarray(HEADER_BYTES, tableEnd)) !== input.readUInt32LE(24)) fail('the table of sections is damaged');
  // Views need alignment; a Buffer sliced from a pool may not have it (a framed file is kept aligned).
  const buffer = input.byteOffset % 8 === 0 ? input : alignedCopy(input);
  if (new Uint32Array(buffer.buffer, buffer.byteOffset + 12, 1)[0] !== BYTE_ORDER_MARKER) fail('written on a machine of the other byte order');
  const sections = new Map<string, Section>();
  for (let i = 0; i < count; i++) {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const raw = buffer.subarray(at, at + NAME_BYTES);
    const name = raw.toString('latin1', 0, raw.indexOf(0) < 0 ? NAME_BYTES : raw.indexOf(0));
    const [version, flags, offset, bytes, checksum] = [16, 20, 24, 28, 32].map((field) => buffer.readUInt32LE(at + field)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    if (offset % 8 !== 0 || offset < tableEnd || offset + bytes > total) fail(`section '${name}' is out of bounds`);
    const view = buffer.subarray(offset, offset + bytes);
    let verdict: boolean | undefined = (flags & CHECKED) === 0 ? true : undefined;
    sections.set(name, { name, version, bytes: view, sound: () => (verdict ??= crc32(view) === checksum) });
  }
  return { version: buffer.readUInt32LE(8), sections };
}

/** A copy of `input` in an ArrayBuffer of its own, so typed-array views on it are aligned. */
export function alignedCopy(input: Buffer): Buffer {
  const copy = Buffer.alloc(input.length); // never pooled, so it starts its own ArrayBuffer
  input.copy(copy);
  return copy;
}

/** zlib's CRC-32: Node's own where it has it (20.15 and later), else a table in JavaScript with the same result. */
export const crc32: (bytes: Uint8Array) => number = typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (bytes) => zlib.crc32(bytes) : crc32Js;

let table: Int32Array | undefined;

export function crc32Js(bytes: Uint8Array): number {
  if (!table) {
    table = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c;
    }
  }
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = (table[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
