import type { CommitRecord, FileWrite, Preimage, RevisionInfo } from '../commit/record.js';
import type { CoreContext } from '../context.js';
import type { ChangedFile } from '../events.js';
import type { Corpus } from '../note/corpus.js';

/**
 * The types the revision kinds share — a write, a delete, the rules, line endings, a revert (one
 * module each) and the commit they all go through (revision-commit.ts) — in a module of their own so
 * that no kind imports the service that composes them (revision-service.ts re-exports the public ones).
 */

export interface BankWriteInput {
  space_id: string;
  filename: string;
  /** The whole new text; or `edits`, section edits as consolidation plans use them. */
  content?: string;
  edits?: unknown[];
  /** The version (bank_read's `version`) the caller read; required to change a file that exists. */
  if_match?: string;
  reason?: string;
  /** What this removes was a secret: the text kept in history has the removed lines redacted too. */
  secret?: boolean;
}

export interface RevisionResult {
  status: 'ok' | 'created' | 'deleted';
  space_id: string;
  revision_id: string;
  /** The new text's version (bank_write, space_update_rules): the next correction's if_match. */
  version?: string;
  [field: string]: unknown;
}

/** How a revision commits: `secret` (its pre-images lose the lines it removes), `then` (run under the lease once applied). */
export interface CommitOptions {
  secret?: boolean;
  then?: () => Promise<void>;
}

/** What one revision writes, as its `plan` computes it under the space's lease. */
export interface Planned {
  writes: FileWrite[];
  preimages: Preimage[];
  rules?: CommitRecord['rules'];
  revision: RevisionInfo;
}

/**
 * What every revision kind is given by the core's composition: one small object instead of a
 * closure, so that each kind is a module-level function whose needs are visible in its signature.
 */
export interface RevisionDeps {
  context: CoreContext;
  /** The space's history: the consolidations holding a copy of the synthesis, a revision to revert and its pre-images. */
  corpus: Corpus;
  /** Called after a revision that wrote bank files or the synthesis (the rules alone do not call it). */
  onCommitted?: (spaceId: string, files: ChangedFile[], synthesis: boolean) => void;
}
