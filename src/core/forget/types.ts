import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { Corpus } from '../note/corpus.js';

/**
 * The types a forget's steps share — choosing and locating the notes (select.ts), what may still hold
 * their words (review.ts), the dry run (dry-run.ts), the commit (forget-commit.ts) and the receipt
 * (receipt.ts) — in a module of their own so that no step imports the service that composes them
 * (forget-service.ts re-exports ForgetInput).
 */

export interface ForgetInput {
  space_id: string;
  /** Note file names (live or consolidated), as history_read, live_read and memory_search give them. */
  refs?: string[];
  /** Or a query: the notes (live and consolidated) it finds, best first, up to `limit`. */
  query?: string;
  limit?: number;
  /** Without it, a dry run: the receipt of what would be removed, nothing changed. */
  confirm?: boolean;
  reason?: string;
  /** Rewrite the space's backups without the notes too (their files and manifest checksums). */
  purge_backups?: boolean;
}

export interface Located {
  filename: string;
  /** The consolidation whose notes.json holds it; null: in live/ only. */
  consolidation_id: string | null;
}

/**
 * What every forget step is given by the core's composition: one small object instead of a closure,
 * so that each step is a module-level function whose needs are visible in its signature.
 */
export interface ForgetDeps {
  context: CoreContext;
  corpus: Corpus;
  /** memory_search, asked `exact`: a forget's query selects only notes holding its words (recall-query.ts RecallOptions). */
  search: (
    caller: Caller,
    input: { space_id: string; query: string; sources: string[]; limit: number },
    options: { exact: true },
  ) => Promise<{ results: Array<{ source: string; ref: string }> }>;
  onForgotten?: (spaceId: string) => Promise<void>;
  /** Section-level provenance (recall/sources.ts): the bank sections each note fed. */
  sectionsOf?: (spaceId: string, note: string) => Promise<Array<{ filename: string; path: string[] }>>;
}
