import { createHash } from 'node:crypto';
import { isLiveMemError } from '../../shared/errors.js';
import { hasMagic, readSections, type SectionSource, writeSections } from '../../shared/sections.js';
import { listKeys } from '../../storage/list.js';
import type { TextIndex, TextIndexEngine } from '../../search/types.js';
import type { CoreContext } from '../context.js';
import { INDEX_LIVE_TEXTS as LIVE_TEXTS, INDEX_SNAPSHOT as SNAPSHOT, spaceKeys } from '../layout.js';
import { INDEX_OPTIONS, type PreimageCoverage } from './documents.js';
import { decodeLiveTexts, type Packed } from './live-texts.js';

/**
 * Snapshots of a space's search index in the store, `{space}/_index/{stamp}-{random}.snapshot`, so a
 * new process loads one and reads only what is newer instead of every note.
 *
 * Why this is safe with many processes on many machines refreshing at once: a snapshot is written
 * once under a name no one else uses (create-only), never changed, and says exactly what it covers
 * (the header below). Two writers make two snapshots, each whole; a reader takes the newest that
 * verifies and reconciles it with the store, which stays the only truth — so a snapshot that covers
 * less than another costs catch-up reads, never a lost entry. A damaged one is deleted and skipped.
 *
 * Frame: a file of sections (shared/sections.ts), "LMRISECT", format 2: `header` (the JSON below), then
 * `vectors` when the header says so (the vector store's buffer, which checks itself), then `engine` (the
 * engine's snapshot, a file of sections itself, checked section by section, its postings by blocks as a
 * search first reads them). Each section carries its
 * own version and checksum, so a damaged part that can be computed again alone is (the embeddings, the
 * engine's hash tables), and a section added later (`extra`) is skipped by readers that do not know it.
 * The space index adds `timeline` (timeline.ts: level 0's note times for the ranking), which a damaged
 * snapshot loses alone: it is placed again from the history records.
 * Format 1 ("LMRI", u32 1, a SHA-256 of the JSON header, the buffers after it) is still read.
 *
 * Beside a snapshot, under the same name, `.live` holds the texts of the live notes it covers
 * (live-texts.ts): `live_search` reads that small file alone, never the index.
 */
export interface SnapshotHeader {
  format: 'live-mem-index';
  engine: string;
  space_id: string;
  created_at: string;
  /** History entries in the index: consolidations whose notes are (`h:` documents), compactions whose pre-images are (`p:`). */
  history: string[];
  /**
   * Compactions' pre-images in the index, by compaction id: when each was committed, and each section's
   * file and heading path (their text stays in preimages.json). Absent from snapshots written before
   * compaction existed: their `history` may then list compactions whose pre-images are not indexed.
   */
  preimages?: Record<string, { committed_at: string; sections: PreimageCoverage[] }>;
  /** Bank files by etag, with their sections (ids, heading paths and text: the bank is small). */
  bank: Record<string, { etag: string; sections: Array<{ id: string; path: string[]; text: string }> }>;
  synthesis: { etag: string } | null;
  summaries: Record<string, SummaryCoverage>;
  /** Embeddings stored beside the text index (hybrid search), by the model that computed them. */
  vectors: { model: string; bytes: number } | null;
}

export interface SummaryCoverage {
  etag: string;
  level: number;
  sealed: boolean;
  range_start: string;
  range_end: string;
}

const MAGIC = Buffer.from('LMRISECT', 'latin1');
const FRAME_VERSION = 2;
const SECTION_VERSION = 1;
/** Format 1: "LMRI", u32 1, u32 header length, the header's SHA-256, the header, the buffers. */
const MAGIC_1 = Buffer.from('LMRI');
const PREFIX_BYTES_1 = 4 + 4 + 4 + 32;
/** Snapshots kept per space: the newest, and one more for a reader that listed just before it. */
const KEEP = 2;

/** A snapshot as decoded: what it says it covers, the index, the vectors, and what a load computed again. */
export interface DecodedSnapshot {
  header: SnapshotHeader;
  index: TextIndex;
  vectors: Buffer | null;
  /** Parts the load computed again (damaged or of an older format): the caller writes a sound snapshot. */
  rebuilt: string[];
  /** Sections beside the header, the vectors and the engine (`extra` when encoded), by name: sound ones only. */
  extra: ReadonlyMap<string, Buffer>;
}

/**
 * The frame, written in one buffer: the engine serialises after a headroom where the table, the
 * header and the sections before it go (no second and third copy of a snapshot that is 140 MB at 1M
 * notes). `extra` sections (ranking data kept with the index, say) are carried as given.
 */
export function encodeSnapshot(
  header: Omit<SnapshotHeader, 'vectors'>,
  index: TextIndex,
  vectors?: { model: string; buffer: Buffer },
  extra: readonly SectionSource[] = [],
): Buffer {
  const full: SnapshotHeader = { ...header, vectors: vectors ? { model: vectors.model, bytes: vectors.buffer.length } : null };
  const json = Buffer.from(JSON.stringify(full), 'utf8');
  const sections: SectionSource[] = [{ name: 'header', version: SECTION_VERSION, bytes: json.length, write: (into) => json.copy(into) }];
  if (vectors)
    sections.push({ name: 'vectors', version: SECTION_VERSION, bytes: vectors.buffer.length, write: (into) => vectors.buffer.copy(into), checksum: false });
  sections.push(...extra);
  return writeSections(MAGIC, FRAME_VERSION, sections, {
    last: { name: 'engine', version: SECTION_VERSION, make: (headroom) => index.serialize(headroom), checksum: false },
  });
}

/** Decodes a snapshot; throws on anything that is not a whole snapshot of this engine (a damaged part that can be computed again is). */
export function decodeSnapshot(buffer: Buffer, engine: TextIndexEngine): DecodedSnapshot {
  if (!hasMagic(buffer, MAGIC)) return decodeFormat1(buffer, engine);
  const { version, sections } = readSections(buffer, MAGIC);
  if (version !== FRAME_VERSION) throw new Error(`snapshot frame version ${version} is not ${FRAME_VERSION}`);
  const part = (name: string): Buffer | null => {
    const section = sections.get(name);
    if (!section) return null;
    if (section.version !== SECTION_VERSION) throw new Error(`snapshot ${name} section version ${section.version} is not ${SECTION_VERSION}`);
    if (!section.sound()) throw new Error(`snapshot ${name} section checksum mismatch`);
    return section.bytes;
  };
  const json = part('header');
  if (!json) throw new Error('snapshot has no header');
  const header = checkHeader(JSON.parse(json.toString('utf8')) as SnapshotHeader, engine);
  const engineBytes = part('engine');
  if (!engineBytes) throw new Error('snapshot has no engine section');
  const vectors = header.vectors ? part('vectors') : null;
  if (header.vectors && vectors?.length !== header.vectors.bytes) throw new Error('snapshot vectors section does not match its header');
  const index = engine.load(engineBytes, INDEX_OPTIONS);
  const extra = new Map<string, Buffer>();
  const rebuilt = [...index.rebuilt];
  for (const [name, section] of sections) {
    if (name === 'header' || name === 'vectors' || name === 'engine') continue;
    if (section.sound()) extra.set(name, section.bytes);
    else rebuilt.push(name);
  }
  return { header, index, vectors, rebuilt, extra };
}

function checkHeader(header: SnapshotHeader, engine: TextIndexEngine): SnapshotHeader {
  if (header.format !== 'live-mem-index') throw new Error('snapshot header has another format');
  if (header.engine !== engine.name) throw new Error(`snapshot was written by engine ${header.engine}, not ${engine.name}`);
  return header;
}

function decodeFormat1(buffer: Buffer, engine: TextIndexEngine): DecodedSnapshot {
  if (buffer.length < PREFIX_BYTES_1 || !hasMagic(buffer, MAGIC_1)) throw new Error('not a live-mem index snapshot');
  if (buffer.readUInt32LE(4) !== 1) throw new Error(`snapshot frame version ${buffer.readUInt32LE(4)} is not 1 or ${FRAME_VERSION}`);
  const length = buffer.readUInt32LE(8);
  if (PREFIX_BYTES_1 + length > buffer.length) throw new Error('snapshot is truncated');
  const json = buffer.subarray(PREFIX_BYTES_1, PREFIX_BYTES_1 + length);
  if (!createHash('sha256').update(json).digest().equals(buffer.subarray(12, 44))) throw new Error('snapshot header checksum mismatch');
  const header = checkHeader(JSON.parse(json.toString('utf8')) as SnapshotHeader, engine);
  const vectorBytes = header.vectors?.bytes ?? 0;
  if (!Number.isInteger(vectorBytes) || vectorBytes < 0 || PREFIX_BYTES_1 + length + vectorBytes > buffer.length) throw new Error('snapshot is truncated');
  const start = PREFIX_BYTES_1 + length;
  const index = engine.load(buffer.subarray(start + vectorBytes), INDEX_OPTIONS);
  return {
    header,
    vectors: vectorBytes > 0 ? buffer.subarray(start, start + vectorBytes) : null,
    index,
    rebuilt: ['frame-1', ...index.rebuilt],
    extra: new Map(),
  };
}

export function createIndexStore(context: CoreContext, engine: TextIndexEngine) {
  const { storage, logger } = context;
  /** The space's index files, each kind newest first, from one listing. */
  const filesOf = async (spaceId: string): Promise<{ snapshots: string[]; live: string[] }> => {
    const keys = (await listKeys(storage, spaceKeys(spaceId).index)).sort().reverse();
    return { snapshots: keys.filter((key) => key.endsWith(SNAPSHOT)), live: keys.filter((key) => key.endsWith(LIVE_TEXTS)) };
  };
  const snapshotKeys = async (spaceId: string) => (await filesOf(spaceId)).snapshots;

  return {
    /** The newest snapshot that verifies, or null; damaged ones are deleted (and logged). */
    async loadNewest(spaceId: string): Promise<(DecodedSnapshot & { key: string }) | null> {
      for (const key of await snapshotKeys(spaceId)) {
        const object = await storage.get(key);
        if (!object) continue; // pruned since listed
        try {
          const decoded = decodeSnapshot(object.body, engine);
          if (decoded.header.space_id !== spaceId) throw new Error(`snapshot belongs to space '${decoded.header.space_id}'`);
          return { ...decoded, key };
        } catch (error) {
          logger.warn(`search index snapshot ${key} is unusable (${(error as Error).message}); deleting it and rebuilding from the store`);
          await storage.delete(key).catch(() => undefined);
        }
      }
      return null;
    },

    /**
     * The live notes' texts beside the newest snapshot that has them (older snapshots have none), or
     * null; a damaged file is deleted (and logged), as a snapshot is.
     */
    async loadNewestLive(spaceId: string): Promise<Packed | null> {
      for (const key of (await filesOf(spaceId)).live) {
        const object = await storage.get(key);
        if (!object) continue; // pruned since listed
        try {
          return decodeLiveTexts(object.body, spaceId);
        } catch (error) {
          logger.warn(`live notes' texts ${key} are unusable (${(error as Error).message}); deleting them, live_search reads the notes`);
          await storage.delete(key).catch(() => undefined);
        }
      }
      return null;
    },

    /** Every snapshot, newest first, decoded or with why it is unusable; changes nothing (doctor). */
    async inspect(spaceId: string): Promise<Array<{ key: string; header: SnapshotHeader | null; problem?: string }>> {
      const found: Array<{ key: string; header: SnapshotHeader | null; problem?: string }> = [];
      for (const key of await snapshotKeys(spaceId)) {
        const object = await storage.get(key);
        if (!object) continue;
        try {
          const { header, index } = decodeSnapshot(object.body, engine);
          if (header.space_id !== spaceId) throw new Error(`snapshot belongs to space '${header.space_id}'`);
          index.verify(); // what a load leaves to be checked as it is first read
          found.push({ key, header });
        } catch (error) {
          found.push({ key, header: null, problem: (error as Error).message });
        }
      }
      return found;
    },

    /**
     * Writes a snapshot (from `encodeSnapshot`) and its live notes' texts (from `encodeLiveTexts`)
     * under a fresh name, the texts first, either alone if need be (a process that only ran
     * live_search has texts and no index); then prunes files of each kind older than them past the
     * newest few. Returns the keys written.
     */
    async save(spaceId: string, files: { snapshot?: Buffer; live?: Buffer }): Promise<string[]> {
      const now = context.clock();
      const stem = `${spaceKeys(spaceId).index}${now.toISOString().replace(/[-:.]/g, '')}-${context.randomId()}`;
      const writes = [
        { key: `${stem}${LIVE_TEXTS}`, body: files.live },
        { key: `${stem}${SNAPSHOT}`, body: files.snapshot },
      ].filter((write): write is { key: string; body: Buffer } => write.body !== undefined);
      const written: string[] = [];
      for (const { key, body } of writes) {
        try {
          await storage.put(key, body, { ifNoneMatch: '*', contentType: 'application/octet-stream' });
          written.push(key);
        } catch (error) {
          // The same name from another writer: astronomically rare, and any whole file will do.
          if (!isLiveMemError(error, 'precondition_failed')) throw error;
        }
      }
      const present = await filesOf(spaceId);
      const older = [...present.snapshots.slice(KEEP), ...present.live.slice(KEEP)].filter((old) => old < stem);
      if (older.length > 0) await storage.deleteMany(older);
      return written;
    },
  };
}

export type IndexStore = ReturnType<typeof createIndexStore>;
