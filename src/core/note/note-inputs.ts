/**
 * What the note tools (live_note, live_read, live_search) accept, and the largest page they return:
 * one place for the service and the modules it delegates to, so they read the same bounds.
 */

/** The most notes one read or search returns. */
export const MAX_READ_LIMIT = 1000;

export interface NoteWriteInput {
  space_id: string;
  category: string;
  content: string;
  /** Only the local owner may choose; other callers always write as themselves. */
  agent?: string;
  /** Comma-separated, or a list. */
  tags?: string | string[];
  /** The code it cites, captured from the writer's checkout (core/anchors/): stored beside its text. */
  anchors?: readonly unknown[];
}

export interface NoteReadInput {
  space_id: string;
  limit?: number;
  category?: string;
  agent?: string;
  since?: string;
  /** A note's filename: only notes older than it (the next page after a read that had more). */
  before?: string;
}

export interface NoteSearchInput {
  space_id: string;
  query: string;
  limit?: number;
}
