import { createHash } from 'node:crypto';
import { isLiveMemError } from '../../shared/errors.js';
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
 * Frame: "LMRI", u32 frame version, u32 header length, sha256 of the header (32 bytes), the header
 * (JSON, padded with spaces so the engine's buffer starts 8-byte aligned), the vector store's buffer
 * when the header says so (its own checksum), then the engine's buffer (its own checksum).
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

const MAGIC = Buffer.from('LMRI');
const FRAME_VERSION = 1;
const PREFIX_BYTES = 4 + 4 + 4 + 32;
/** Snapshots kept per space: the newest, and one more for a reader that listed just before it. */
const KEEP = 2;

/**
 * The frame, written in one buffer: the engine serialises after a headroom where the prefix, the
 * header and the sections before it go (no second and third copy of a snapshot that is 140 MB at
 * 1M notes). The header JSON is padded with spaces (still JSON, and covered by its checksum) so the
 * engine's buffer starts 8-byte aligned: a reader then uses it in place instead of copying it.
 */
export function encodeSnapshot(header: Omit<SnapshotHeader, 'vectors'>, index: TextIndex, vectors?: { model: string; buffer: Buffer }): Buffer {
  const full: SnapshotHeader = { ...header, vectors: vectors ? { model: vectors.model, bytes: vectors.buffer.length } : null };
  const sections = vectors ? [vectors.buffer] : [];
  const sectionBytes = sections.reduce((sum, section) => sum + section.length, 0);
  const unpadded = Buffer.from(JSON.stringify(full), 'utf8');
  const json = Buffer.alloc(unpadded.length + ((8 - ((PREFIX_BYTES + unpadded.length + sectionBytes) % 8)) % 8), ' ');
  unpadded.copy(json);
  const headroom = PREFIX_BYTES + json.length + sectionBytes;
  const out = index.serialize(headroom);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(FRAME_VERSION, 4);
  out.writeUInt32LE(json.length, 8);
  createHash('sha256').update(json).digest().copy(out, 12);
  let at = PREFIX_BYTES;
  for (const part of [json, ...sections]) at += part.copy(out, at);
  return out;
}

/** Decodes a snapshot; throws on anything that is not a whole snapshot of this engine. */
export function decodeSnapshot(buffer: Buffer, engine: TextIndexEngine): { header: SnapshotHeader; index: TextIndex; vectors: Buffer | null } {
  if (buffer.length < PREFIX_BYTES || !buffer.subarray(0, 4).equals(MAGIC)) throw new Error('not a live-mem index snapshot');
  if (buffer.readUInt32LE(4) !== FRAME_VERSION) throw new Error(`snapshot frame version ${buffer.readUInt32LE(4)} is not ${FRAME_VERSION}`);
  const length = buffer.readUInt32LE(8);
  if (PREFIX_BYTES + length > buffer.length) throw new Error('snapshot is truncated');
  const json = buffer.subarray(PREFIX_BYTES, PREFIX_BYTES + length);
  if (!createHash('sha256').update(json).digest().equals(buffer.subarray(12, 44))) throw new Error('snapshot header checksum mismatch');
  const header = JSON.parse(json.toString('utf8')) as SnapshotHeader;
  if (header.format !== 'live-mem-index') throw new Error('snapshot header has another format');
  if (header.engine !== engine.name) throw new Error(`snapshot was written by engine ${header.engine}, not ${engine.name}`);
  const vectorBytes = header.vectors?.bytes ?? 0;
  if (!Number.isInteger(vectorBytes) || vectorBytes < 0 || PREFIX_BYTES + length + vectorBytes > buffer.length) throw new Error('snapshot is truncated');
  const start = PREFIX_BYTES + length;
  return {
    header,
    vectors: vectorBytes > 0 ? buffer.subarray(start, start + vectorBytes) : null,
    index: engine.load(buffer.subarray(start + vectorBytes), INDEX_OPTIONS),
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
    async loadNewest(spaceId: string): Promise<{ header: SnapshotHeader; index: TextIndex; vectors: Buffer | null; key: string } | null> {
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
          const { header } = decodeSnapshot(object.body, engine);
          if (header.space_id !== spaceId) throw new Error(`snapshot belongs to space '${header.space_id}'`);
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
