import { createHash } from 'node:crypto';
import { firstIndex } from '../../shared/bisect.js';
import { type LiveMatch, matchesNeedle } from '../note/note-text.js';

/**
 * What `live_search` matches, kept so that a new process need not read every live note: each live
 * note's content and tags, lowercased, by filename. A note never changes once written, so an entry
 * stays true for as long as the note exists, whichever process or file it came from; which notes are
 * live is always the listing's say. The search index keeps the texts of its live notes and writes them
 * beside each snapshot (`{stem}.live`, index-store.ts); `live_search` loads the newest such file and
 * reads the bodies only of notes it does not cover, and of the few it returns.
 *
 * Lowercased with the Unicode default mapping, not the process's locale: files are shared by
 * processes on machines with different locales.
 *
 * A file's texts stay in memory as it is: one string of every text end to end, with where each text
 * ends and whose it is — a search is a few `indexOf` over it. Parsing ten thousand small arrays was
 * the cost of a first search (their garbage collection most of it); this is one string and three
 * arrays. Notes added since are kept beside, one entry each. (What a note's texts are: note/note-text.ts.)
 */

/**
 * A file's texts as loaded: every text end to end in `joined`, as the file's UTF-8 bytes (never decoded
 * whole: a search looks for the needle's bytes), text i ending at byte `ends[i]` and belonging to note
 * `owners[i]`.
 */
export interface Packed {
  filenames: string[];
  index: Map<string, number>;
  joined: Buffer;
  ends: Uint32Array;
  owners: Uint32Array;
  /** live/'s version at which `filenames` were its whole listing, oldest first (see the file format). */
  listingVersion?: string;
}

/** Bytes an added entry costs besides its characters (a Map entry, an array, string headers). */
const ENTRY_BYTES = 160;

export function createLiveTexts() {
  let packed: Packed | null = null;
  const added = new Map<string, readonly string[]>();
  /** Notes of `packed` no longer live (consolidated, forgotten): left out of files written. */
  const dropped = new Set<number>();
  let addedChars = 0;

  const packedTexts = (note: number): string[] => {
    const { joined, ends, owners } = packed as Packed;
    const texts: string[] = [];
    let i = firstTextOf(owners, note);
    for (; i < owners.length && owners[i] === note; i++) texts.push(joined.toString('utf8', i === 0 ? 0 : (ends[i - 1] as number), ends[i]));
    return texts;
  };

  const get = (filename: string): readonly string[] | undefined => {
    const added_ = added.get(filename);
    if (added_) return added_;
    const note = packed?.index.get(filename);
    return note === undefined || dropped.has(note) ? undefined : packedTexts(note);
  };

  return {
    get,

    /** Records a note's texts (from `searchableTexts`); a note already known keeps its entry. */
    set(filename: string, entry: readonly string[]): void {
      if (added.has(filename) || (packed?.index.has(filename) && !dropped.has(packed.index.get(filename) as number))) return;
      added.set(filename, entry);
      addedChars += filename.length + entry.reduce((sum, text) => sum + text.length, 0);
    },

    delete(filename: string): void {
      const entry = added.get(filename);
      if (entry) {
        addedChars -= filename.length + entry.reduce((sum, text) => sum + text.length, 0);
        added.delete(filename);
      }
      const note = packed?.index.get(filename);
      if (note !== undefined) dropped.add(note);
    },

    /** Drops every entry whose note is not in `live` (consolidated or forgotten since). */
    retain(live: ReadonlySet<string>): void {
      for (const filename of [...added.keys()]) if (!live.has(filename)) this.delete(filename);
      packed?.filenames.forEach((filename, note) => {
        if (!live.has(filename)) dropped.add(note);
      });
    },

    /** Replaces what a file held (`decodeLiveTexts`); notes added since stay. */
    load(file: Packed): void {
      packed = file;
      dropped.clear();
      for (const filename of [...added.keys()]) if (file.index.has(filename)) this.delete(filename);
    },

    /**
     * For one needle (lowercased), what is known of each note: a text of it holds the needle, none
     * does, or its texts are unknown. One pass of `indexOf` over the file's texts, a match across two
     * texts not counted.
     */
    matcher(needle: string): (filename: string) => LiveMatch {
      const hits = new Set<number>();
      if (packed && needle.length > 0) {
        const { joined, ends, owners } = packed;
        // UTF-8 is self-synchronising: the needle's bytes are found only where its characters are.
        const bytes = Buffer.from(needle, 'utf8');
        for (let at = joined.indexOf(bytes); at >= 0; ) {
          const text = textAt(ends, at);
          if (at + bytes.length <= (ends[text] as number)) {
            const note = owners[text] as number;
            hits.add(note);
            let last = text; // the rest of this note's texts need no look
            while (last + 1 < owners.length && owners[last + 1] === note) last++;
            at = joined.indexOf(bytes, ends[last]);
          } else at = joined.indexOf(bytes, at + 1);
        }
      }
      return (filename) => {
        const entry = added.get(filename);
        if (entry) return matchesNeedle(entry, needle) ? 'match' : 'no-match';
        const note = packed?.index.get(filename);
        if (note === undefined || dropped.has(note)) return 'unknown';
        return needle.length === 0 || hits.has(note) ? 'match' : 'no-match';
      };
    },

    /** The entries of these notes, those known. */
    *of(filenames: Iterable<string>): Iterable<[string, readonly string[]]> {
      for (const filename of filenames) {
        const entry = get(filename);
        if (entry) yield [filename, entry];
      }
    },

    /** An estimate of the memory held (UTF-16 characters, and a fixed cost per entry and per text). */
    bytes(): number {
      const file = packed ? packed.joined.length + packed.filenames.length * (ENTRY_BYTES + 2 * 60) + packed.ends.length * 8 : 0;
      return file + added.size * ENTRY_BYTES + addedChars * 2;
    },
  };
}

/** The text holding byte `at` of the joined texts: the first whose end is past it. */
const textAt = (ends: Uint32Array, at: number): number => firstIndex(ends.length, (i) => (ends[i] as number) > at);

/** The first text of a note (texts are in note order). */
const firstTextOf = (owners: Uint32Array, note: number): number => firstIndex(owners.length, (i) => (owners[i] as number) >= note);

/**
 * The file: "LMLT", u32 format version, the SHA-256 of what follows, u32 length of a JSON header
 * `{ space_id, filenames, texts: per note how many, lengths: per text its length in UTF-8 bytes,
 * listing_version? }`, the header, then every text end to end (UTF-8), as `searchableTexts` gives them.
 *
 * `listing_version`, when present, is live/'s folder version (StorageDriver.version) at which
 * `filenames`, oldest first, were every note the folder held: a new process that finds the folder
 * at that version still has that listing, and need not read a folder of ten thousand names again.
 */
const MAGIC = Buffer.from('LMLT');
const FORMAT_VERSION = 1;
const PREFIX_BYTES = 4 + 4 + 32;

export function encodeLiveTexts(spaceId: string, entries: Iterable<[string, readonly string[]]>, listingVersion?: string): Buffer {
  const filenames: string[] = [];
  const counts: number[] = [];
  const lengths: number[] = [];
  const texts: string[] = [];
  for (const [filename, entry] of entries) {
    filenames.push(filename);
    counts.push(entry.length);
    for (const text of entry) {
      lengths.push(Buffer.byteLength(text, 'utf8'));
      texts.push(text);
    }
  }
  const fields = { space_id: spaceId, filenames, texts: counts, lengths, ...(listingVersion === undefined ? {} : { listing_version: listingVersion }) };
  const header = Buffer.from(JSON.stringify(fields), 'utf8');
  const headerLength = Buffer.alloc(4);
  headerLength.writeUInt32LE(header.length, 0);
  // Each text encoded on its own, as its length was taken (a lone surrogate is one replacement character in both).
  const body = Buffer.concat([headerLength, header, ...texts.map((text) => Buffer.from(text, 'utf8'))]);
  const prefix = Buffer.alloc(PREFIX_BYTES);
  MAGIC.copy(prefix, 0);
  prefix.writeUInt32LE(FORMAT_VERSION, 4);
  createHash('sha256').update(body).digest().copy(prefix, 8);
  return Buffer.concat([prefix, body]);
}

const isCountList = (value: unknown, min: number): value is number[] =>
  Array.isArray(value) && value.every((n) => Number.isInteger(n) && (n as number) >= min && (n as number) < 2 ** 31);

/** Decodes a file from `encodeLiveTexts`; throws on anything that is not a whole one of this space. */
export function decodeLiveTexts(buffer: Buffer, spaceId: string): Packed {
  if (buffer.length < PREFIX_BYTES + 4 || !buffer.subarray(0, 4).equals(MAGIC)) throw new Error('not a live-mem live texts file');
  if (buffer.readUInt32LE(4) !== FORMAT_VERSION) throw new Error(`live texts format ${buffer.readUInt32LE(4)} is not ${FORMAT_VERSION}`);
  const body = buffer.subarray(PREFIX_BYTES);
  if (!createHash('sha256').update(body).digest().equals(buffer.subarray(8, PREFIX_BYTES))) throw new Error('live texts checksum mismatch');
  const headerLength = body.readUInt32LE(0);
  if (4 + headerLength > body.length) throw new Error('live texts are truncated');
  const header = JSON.parse(body.toString('utf8', 4, 4 + headerLength)) as Record<string, unknown>;
  if (header.space_id !== spaceId) throw new Error(`live texts belong to space '${String(header.space_id)}'`);
  const { filenames, texts: counts, lengths, listing_version: listingVersion } = header;
  const wellFormed =
    Array.isArray(filenames) &&
    filenames.every((filename) => typeof filename === 'string') && // only ever compared with names listed: no parse needed
    isCountList(counts, 1) &&
    counts.length === filenames.length &&
    isCountList(lengths, 0) &&
    lengths.length === counts.reduce((sum, n) => sum + n, 0);
  if (!wellFormed) throw new Error('live texts hold a list that is not filenames and their texts');
  if (listingVersion !== undefined && (typeof listingVersion !== 'string' || listingVersion === ''))
    throw new Error('live texts hold a listing version that is not one');
  const joined = body.subarray(4 + headerLength);
  const ends = new Uint32Array(lengths.length);
  const owners = new Uint32Array(lengths.length);
  let end = 0;
  let text = 0;
  for (let note = 0; note < counts.length; note++) {
    for (let i = 0; i < (counts[note] as number); i++, text++) {
      end += lengths[text] as number;
      ends[text] = end;
      owners[text] = note;
    }
  }
  if (end !== joined.length) throw new Error('live texts do not add up to their lengths');
  const index = new Map<string, number>();
  for (let note = 0; note < filenames.length; note++) index.set(filenames[note] as string, note);
  return { filenames: filenames as string[], index, joined, ends, owners, ...(listingVersion === undefined ? {} : { listingVersion }) };
}
