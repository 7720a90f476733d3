import type { LlmClient } from '../../llm/types.js';
import type { ChangedFile } from '../events.js';
import type { SectionRetention } from '../retention/record.js';

/**
 * The shapes of a compaction call and its answer, shared by the service that checks the call
 * (compaction-service.ts, which re-exports them) and the run that does the work (run.ts), in a module
 * of their own so that the run does not import the service that composes it.
 */

export interface CompactInput {
  space_id: string;
  /** Only this file (compacted only if over its budget). */
  file?: string;
  /** Ask the model and check its digests, but write nothing. */
  dry_run?: boolean;
}

export interface CompactOptions {
  /** A model for this call only (e.g. MCP sampling), used when none is configured. */
  llm?: LlmClient;
  /** How long to wait for the space's lease (default: not at all: `conflict`). */
  waitMs?: number;
}

export interface CompactedFile {
  filename: string;
  tokens_before: number;
  tokens_after: number;
  budget_tokens: number;
  sections_digested: number;
  /** Why this file was left as it was: a guard refused the model's digests, or the model failed. */
  refused?: string;
  /** Sections whose digest does not keep every item the section held (core/retention); the pre-image keeps them. */
  retention?: SectionRetention[];
}

export interface CompactionResult {
  status: 'ok' | 'partial' | 'error';
  space_id: string;
  files: CompactedFile[];
  compaction_id?: string;
  dry_run: boolean;
  llm_tokens_used: number;
  message?: string;
  [field: string]: unknown;
}

export interface CompactionHooks {
  /** Called after a compaction committed (e.g. to update the space's summaries). */
  onCommitted?: (spaceId: string, files: ChangedFile[]) => void;
}
