import type { LlmCalls } from '../../../llm/call.js';
import type { CoreContext } from '../../context.js';
import type { JobRecord } from '../../jobs.js';
import type { Corpus } from '../../note/corpus.js';
import type { Strategy, SummaryParams } from './plan.js';

/** What a summaries run (runner.ts) takes, what it says while it runs, and what it returns; and its job record. */

export interface RunSettings {
  params: SummaryParams;
  strategy: Strategy;
  /** Highest level built (1 = level 1 only). */
  maxLevel: number;
  concurrency: number;
  batchDelayMs: number;
  dryRun: boolean;
}

export interface SummariesProgress {
  phase: 'plan' | 'llm' | 'done';
  level: number;
  done: number;
  total: number;
  message: string;
}

export interface LevelReport {
  level: number;
  /** Summaries of this level after the run. */
  summaries: number;
  open: number;
  created: number;
  regenerated: number;
  /** Summaries sealed by this run (new sealed ones, and open ones sealed now). */
  sealed: number;
  unchanged: number;
  deleted: number;
  failed: number;
}

export interface SummariesResult {
  status: 'ok' | 'partial' | 'error';
  space_id: string;
  strategy: Strategy;
  dry_run: boolean;
  message?: string;
  levels: LevelReport[];
  /** Summaries written (created, regenerated or sealed), over every level. */
  written: number;
  /** Summaries already up to date, left alone. */
  unchanged: number;
  deleted: number;
  failed: number;
  notes_total: number;
  /** The newest notes, too few to summarise yet (below min_flush_chars). */
  pending_notes: number;
  pending_chars: number;
  llm_calls: number;
  llm_prompt_tokens: number;
  llm_completion_tokens: number;
  llm_tokens_used: number;
  duration_seconds: number;
  failures?: Array<{ level: number; id: string; error: string }>;
  /** dry_run: what each level would do. */
  actions?: Array<{ level: number; id: string; action: string; sealed: boolean; covers: number; chars_in: number }>;
  [field: string]: unknown;
}

export interface RunDeps {
  context: CoreContext;
  corpus: Corpus;
  spaceId: string;
  /** Absent on a dry run. */
  calls?: LlmCalls;
  /** Throws `conflict` when the runner's lease was lost: checked before every write. */
  checkLease: () => void;
  onProgress?: (event: SummariesProgress) => void;
  /** Forgets known when the run began (set by runSummaries): one committed since stops the run. */
  forgets?: number;
}

/**
 * A background summaries run, as stored at `{space}/_summaries/jobs/{id}.json` (see core/jobs.ts),
 * with what started it: `manual` (summaries_update with background) or `auto` (after a consolidation).
 */
export type SummaryJobRecord = JobRecord<SummariesProgress, SummariesResult> & { trigger: 'manual' | 'auto' };
