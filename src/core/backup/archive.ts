import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import { invalid } from '../../shared/errors.js';
import { normalizeKey, RESERVED_SUFFIXES } from '../../shared/keys.js';
import { whyNotContent } from './space-content.js';

/**
 * live-mem's archives: a gzipped tar of plain files, written and read as streams so a large space
 * is never held whole in memory. Entries are `{space}/{path}` plus `manifest.json`, which comes last
 * (its checksums are known only once every file has been read).
 */
export interface ArchiveEntry {
  path: string;
  body: Buffer;
}

const BLOCK = 512;
/** Blocks are handed to gzip in slices about this large: zlib pays a thread hop per write. */
const SLICE = 256 * 1024;

/** Encodes entries as a tar.gz stream, holding about one slice (and the entry being read) in memory. */
export function packArchive(entries: AsyncIterable<ArchiveEntry>, mtime: Date): Readable {
  async function* blocks(): AsyncGenerator<Buffer> {
    let pending: Buffer[] = [];
    let size = 0;
    const add = (block: Buffer) => {
      pending.push(block);
      size += block.length;
    };
    const flush = () => {
      const slice = Buffer.concat(pending, size);
      pending = [];
      size = 0;
      return slice;
    };
    for await (const { path, body } of entries) {
      const header = new Header({ path, mode: 0o644, uid: 0, gid: 0, size: body.length, mtime, type: 'File' });
      // Long or non-ASCII paths need a pax header first, as tar(1) writes them.
      if (header.encode()) add(new Pax({ path, mtime, size: body.length }).encode());
      add(header.block as Buffer);
      add(body);
      const padding = (BLOCK - (body.length % BLOCK)) % BLOCK;
      if (padding > 0) add(Buffer.alloc(padding));
      if (size >= SLICE) yield flush();
    }
    add(Buffer.alloc(BLOCK * 2));
    yield flush();
  }
  const gzip = createGzip();
  return pipeline(Readable.from(blocks()), gzip, () => undefined);
}

/** The entry types an archive may hold; anything else (links, devices, FIFOs) is refused. */
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/**
 * How much an archive may hold once uncompressed: a few kilobytes of gzip can claim gigabytes, and
 * each entry is handed over whole, so both are checked before an entry is read (its header's size)
 * and as its bytes arrive, never after.
 */
export interface ArchiveCaps {
  /** Largest entry, in bytes. */
  maxEntryBytes: number;
  /** Largest sum of every entry, in bytes. */
  maxTotalBytes: number;
}

/**
 * Reads a tar(.gz) stream and hands each file to `onEntry`, in order, one at a time (the input is
 * not read further until `onEntry` settles). Refuses, with `invalid_input`: links, devices and other
 * special entries; paths that are absolute, contain '..' or would escape; an entry or a whole past
 * `caps`; data that is not a tar or gzip stream, or is cut short. Folder entries are ignored
 * (folders follow from file paths). After a refusal nothing more is read or decompressed.
 */
export async function readArchive(input: AsyncIterable<Buffer>, onEntry: (entry: ArchiveEntry) => Promise<void>, caps: ArchiveCaps): Promise<void> {
  const parser = new Parser({ strict: true });
  // The parser ends an entry only once the next chunk arrives: entries are handed over when ended,
  // never awaited mid-stream (that would wait for data not yet written).
  const completed: Array<{ ended: boolean; entry: Promise<ArchiveEntry | null> }> = [];
  let failure: Error | undefined;
  let total = 0;
  parser.on('error', (error: Error) => (failure ??= error));
  parser.on('entry', (entry: ReadEntry) => {
    const slot: (typeof completed)[number] = { ended: false, entry: Promise.resolve(null) };
    completed.push(slot);
    slot.entry = new Promise<ArchiveEntry | null>((resolve) => {
      const finish = (value: ArchiveEntry | null) => {
        slot.ended = true;
        resolve(value);
      };
      const refuse = (error: Error) => {
        failure ??= error;
        entry.resume();
        finish(null);
        // Stops the decompressor at once (the tar library reports its own error, which `failure` ignores).
        parser.abort(new Error('refused'));
      };
      if (failure || entry.type === 'Directory') {
        entry.resume();
        finish(null);
        return;
      }
      if (!FILE_TYPES.has(entry.type)) {
        refuse(invalid(`the archive holds a ${entry.type} entry (${JSON.stringify(entry.path)}): only plain files are accepted`));
        return;
      }
      let path: string;
      try {
        path = safePath(entry.path);
      } catch (error) {
        refuse(error as Error);
        return;
      }
      const tooLarge = oversize(path, entry.size ?? 0, total, caps);
      if (tooLarge) {
        refuse(tooLarge);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      entry.on('data', (chunk: Buffer) => {
        if (slot.ended) return;
        // The header's size bounds what tar hands over; counting what arrives keeps the caps even if it did not.
        size += chunk.length;
        total += chunk.length;
        const over = oversize(path, size, total - size, caps);
        if (over) refuse(over);
        else chunks.push(chunk);
      });
      entry.on('end', () => {
        if (!slot.ended) finish({ path, body: Buffer.concat(chunks, size) });
      });
    });
  });

  /** Hands over the entries that have ended, in order; with `all`, waits for every one. */
  const drain = async (all = false) => {
    while (completed.length > 0 && (all || completed[0]?.ended)) {
      const entry = await (completed.shift() as (typeof completed)[number]).entry;
      if (failure) throw asInvalid(failure);
      if (entry) await onEntry(entry);
    }
  };
  // A good stream ends with 'end'; a cut one only with 'error'.
  const settled = new Promise<void>((resolve) => {
    parser.on('end', () => resolve());
    parser.on('error', () => resolve());
  });
  for await (const chunk of input) {
    parser.write(chunk);
    if (failure) throw asInvalid(failure);
    await drain();
  }
  parser.end();
  await settled;
  if (failure) throw asInvalid(failure);
  await drain(true);
}

/** The refusal of an entry of `size` bytes after `before` bytes of earlier entries, if it passes a cap. */
function oversize(path: string, size: number, before: number, caps: ArchiveCaps): Error | undefined {
  if (size > caps.maxEntryBytes) {
    return invalid(
      `invalid archive: ${JSON.stringify(path)} holds ${size} bytes, more than the ${caps.maxEntryBytes} an entry may hold: raise LIVE_MEM_IMPORT_MAX_ENTRY_BYTES to import it`,
      { entry: path, size, max_bytes: caps.maxEntryBytes, setting: 'LIVE_MEM_IMPORT_MAX_ENTRY_BYTES' },
    );
  }
  if (before + size > caps.maxTotalBytes) {
    return invalid(
      `invalid archive: its files hold more than ${caps.maxTotalBytes} bytes once uncompressed (reached at ${JSON.stringify(path)}): raise LIVE_MEM_IMPORT_MAX_BYTES to import it`,
      { entry: path, size: before + size, max_bytes: caps.maxTotalBytes, setting: 'LIVE_MEM_IMPORT_MAX_BYTES' },
    );
  }
  return undefined;
}

/** A relative, confined path: './' dropped, no '..', no absolute path, no backslash or NUL. */
function safePath(path: string): string {
  const relative = path.replace(/^(\.\/)+/, '');
  // Temp file names are refused as keys, but they are no escape: say what they are.
  const temp = RESERVED_SUFFIXES.some((suffix) => relative.endsWith(suffix)) ? whyNotContent(relative) : undefined;
  if (temp) throw invalid(`invalid archive: ${JSON.stringify(path)} ${temp}`);
  try {
    return normalizeKey(relative);
  } catch {
    throw invalid(`the archive holds an entry that would escape the space: ${JSON.stringify(path)}`);
  }
}

function asInvalid(error: Error): Error {
  if (error.name === 'LiveMemError') return error;
  const code = (error as { code?: string }).code ?? '';
  const reason = /zlib|Z_|unexpected end/i.test(`${code} ${error.message}`)
    ? 'the gzip stream is corrupt or cut short'
    : /TAR_BAD_ARCHIVE|Unrecognized archive/i.test(`${code} ${error.message}`)
      ? 'it is not a tar.gz archive'
      : error.message;
  return invalid(`cannot read the archive: ${reason}`);
}
