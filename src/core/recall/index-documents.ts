import type { TextIndex, TextIndexEngine } from '../../search/types.js';
import { noteText } from '../note/note-text.js';
import { INDEX_OPTIONS } from './documents.js';
import { Timeline } from './timeline.js';
import { createVectorStore, type VectorStore } from './vectors.js';

/** What a Set or Map entry costs with its key's string header (bm25.ts's figures): the estimates' unit. */
export const ENTRY_BYTES = 40 + 16;
/** What the estimate counts per coverage entry kept beside the engine (a summary's, a compaction's, a bank section's). */
export const COVERAGE_BYTES = 300;

/** How far a refresh got, for a display: the consolidations and live notes it reads (a first build, a long catch-up). */
export interface IndexProgress {
  space_id: string;
  phase: 'history' | 'live';
  done: number;
  total: number;
}

export type OnIndexProgress = (event: IndexProgress) => void;

/**
 * One space's documents as the index holds them: the text engine, their embeddings, level 0's
 * timeline, and what changed since the last snapshot. Every feeder (feed-*.ts) changes documents
 * through `put` and `remove` only, so a vector computed from an older text is always dropped; the
 * snapshot writer reads and resets the change flags.
 */
export class IndexDocuments {
  index: TextIndex;
  /** Level 0 in walking order, for the ranking's neighbours and sittings (timeline.ts): kept with the index. */
  timeline = new Timeline();
  /** Embeddings of the documents (hybrid search), when a model is configured; filled in the background. */
  vectors: VectorStore | null;
  /** Bumped at each replacement of a document: a vector computed from an older text is dropped. */
  private readonly generations = new Map<string, number>();
  /** Documents changed since the last snapshot this process knows. */
  changes = 0;
  /** Expensive work since the last snapshot (a build from scratch, embeddings): saved whatever its size. */
  worthSaving = false;
  /** The snapshot loaded had parts computed again (index-store.ts `rebuilt`): the next one is written whatever changed. */
  resave = false;
  /**
   * Vectors computed since the last snapshot: saved even below SNAPSHOT_MIN_DOCUMENTS, since computing
   * them again in each new process is no cheap rebuild (an endpoint's tokens, a local model's CPU).
   */
  vectorsUnsaved = false;

  constructor(engine: TextIndexEngine, embeddings: boolean) {
    this.index = engine.create(INDEX_OPTIONS);
    this.vectors = embeddings ? createVectorStore() : null;
  }

  /** Adds or replaces a document: its vector, if any, is of the old text. */
  put(id: string, text: string): void {
    this.index.add(id, text);
    if (this.vectors) {
      this.vectors.delete(id);
      this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
    }
    this.changes++;
  }

  remove(id: string): void {
    this.vectors?.delete(id);
    if (!this.index.has(id)) return;
    this.index.remove(id);
    this.changes++;
  }

  addNote(id: string, content: string, tags: readonly string[]): void {
    this.put(id, noteText(content, tags));
  }

  /** Up to `limit` documents without a vector, each with its generation (for `setVector`). */
  missingVectors(limit: number): Array<{ id: string; generation: number }> {
    const missing: Array<{ id: string; generation: number }> = [];
    if (!this.vectors) return missing;
    for (const id of this.index.ids()) {
      if (missing.length >= limit) break;
      if (!this.vectors.has(id)) missing.push({ id, generation: this.generations.get(id) ?? 0 });
    }
    return missing;
  }

  /** Stores a document's vector, unless the document was replaced or removed since `generation`. */
  setVector(id: string, vector: Float32Array, generation: number): void {
    if (!this.vectors || !this.index.has(id) || (this.generations.get(id) ?? 0) !== generation) return;
    this.vectors.set(id, vector);
    this.changes++;
    this.worthSaving = true;
    this.vectorsUnsaved = true;
  }

  /** The engine's, the vectors' and the timeline's estimates, and the generations kept beside them. */
  bytes(): number {
    return this.index.bytes() + (this.vectors?.bytes() ?? 0) + this.timeline.bytes() + this.generations.size * ENTRY_BYTES;
  }
}
