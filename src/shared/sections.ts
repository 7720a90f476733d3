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
 * A big section a reader uses piece by piece (an index's postings, of which a search reads the few
 * terms it asks for) may also carry a CRC-32 per block (`blocks`): a companion section `{name}~crc`
 * (u32 block size | u32 blocks | u32 CRC-32 of each block), checked whole itself. A reader then checks
 * the blocks holding the bytes it is about to use (`soundAt`), each once; the section's own CRC-32 is
 * still written, so a reader that knows no companion checks the section whole, as before.
 *
 * CRC-32 (zlib's), not a cryptographic digest: it is there to catch a torn or flipped file, not an
 * adversary (who could write any snapshot whole), and SHA-256 over a 138 MB index was a sixth of a new
 * process's first search at a million notes; CRC-32 over its 170 MB is still 80 ms of one on a shared
 * 2-core machine, hence blocks where a reader uses a section a piece at a time.
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
  /** A CRC-32 per block of this many bytes besides the section's own (a companion section `{name}~crc`). */
  blocks?: number;
}

export interface Section {
  readonly name: string;
  readonly version: number;
  /** A view of the file (not a copy), 8-byte aligned. */
  readonly bytes: Buffer;
  /** Whether the bytes match their checksum: computed on the first call, then remembered. */
  sound(): boolean;
  /**
   * Whether bytes [from, to) of the section match their checksums: the blocks holding them when the
   * section has a sound companion of block checksums (each block computed once, then remembered),
   * else the whole section (`sound`).
   */
  soundAt(from: number, to: number): boolean;
}

/** The companion section holding a section's block checksums. */
const BLOCKS_SUFFIX = '~crc';

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
  given: readonly SectionSource[],
  options: { headroom?: number; last?: LastSection } = {},
): Buffer {
  const { headroom = 0, last } = options;
  if (magic.length !== 8) throw new RangeError('a sections magic is 8 bytes');
  if (headroom % 8 !== 0) throw new RangeError(`sections headroom ${headroom} is not a multiple of 8`);
  const sections = withBlockChecksums(given);
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

/**
 * The sections, each followed by its companion of block checksums when it asks for one. A companion
 * is written after the section it covers (sections are written in order), so it hashes bytes already there.
 */
function withBlockChecksums(sections: readonly SectionSource[]): SectionSource[] {
  const out: SectionSource[] = [];
  for (const section of sections) {
    const size = section.blocks;
    if (size === undefined) {
      out.push(section);
      continue;
    }
    if (!Number.isInteger(size) || size < 8) throw new RangeError(`block size ${size} of section '${section.name}'`);
    const count = Math.ceil(section.bytes / size);
    let written: Buffer | undefined;
    out.push({ ...section, write: (into) => section.write((written = into)) });
    out.push({
      name: `${section.name}${BLOCKS_SUFFIX}`,
      version: 1,
      bytes: 8 + 4 * count,
      write: (into) => {
        const bytes = written as Buffer;
        into.writeUInt32LE(size, 0);
        into.writeUInt32LE(count, 4);
        for (let i = 0; i < count; i++) into.writeUInt32LE(crc32(bytes.subarray(i * size, Math.min(bytes.length, (i + 1) * size))), 8 + 4 * i);
      },
    });
  }
  return out;
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
    const sound = () => (verdict ??= crc32(view) === checksum);
    sections.set(name, { name, version, bytes: view, sound, soundAt: sound });
  }
  for (const section of sections.values()) {
    const companion = sections.get(`${section.name}${BLOCKS_SUFFIX}`);
    if (companion) sections.set(section.name, { ...section, soundAt: blockChecks(section, companion) });
  }
  return { version: buffer.readUInt32LE(8), sections };
}

/**
 * `soundAt` of a section with a companion of block checksums: the blocks a range covers, each
 * hashed once. A companion that is damaged or does not fit the section is not trusted: the section
 * is then checked whole.
 */
function blockChecks(section: Section, companion: Section): (from: number, to: number) => boolean {
  const { bytes } = section;
  let table: Buffer | null | undefined;
  let size = 0;
  let checked = new Uint8Array(0); // per block: 0 not yet, 1 sound, 2 damaged
  const usable = (): Buffer | null => {
    if (table !== undefined) return table;
    const raw = companion.bytes;
    table = null;
    if (companion.version !== 1 || raw.length < 8 || !companion.sound()) return table;
    size = raw.readUInt32LE(0);
    const count = raw.readUInt32LE(4);
    if (size < 8 || raw.length !== 8 + 4 * count || count !== Math.ceil(bytes.length / size)) return table;
    checked = new Uint8Array(count);
    table = raw;
    return table;
  };
  return (from, to) => {
    const crcs = usable();
    if (crcs === null) return section.sound();
    if (from >= to) return true;
    const last = Math.floor((to - 1) / size);
    for (let block = Math.floor(from / size); block <= last; block++) {
      if (checked[block] === 0) {
        const start = block * size;
        checked[block] = crc32(bytes.subarray(start, Math.min(bytes.length, start + size))) === crcs.readUInt32LE(8 + 4 * block) ? 1 : 2;
      }
      if (checked[block] !== 1) return false;
    }
    return true;
  };
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
