/** The seed's metrics (000 §7), plus windows and the consolidations committed. */
export interface ConsolidationResult {
  status: 'ok' | 'partial' | 'error';
  space_id: string;
  message?: string;
  notes_processed: number;
  notes_remaining: number;
  bank_files_created: number;
  bank_files_updated: number;
  bank_files_unchanged: number;
  operations_applied: number;
  operations_failed: number;
  synthesis_size: number;
  synthesis_compressed: boolean;
  llm_prompt_tokens: number;
  llm_completion_tokens: number;
  llm_tokens_used: number;
  llm_calls: number;
  duration_seconds: number;
  windows: number;
  consolidations: string[];
  /** A consolidation left pending by an earlier run, finished before this one. */
  recovered?: string;
  /** A consolidation this run committed but could not apply: the next run (or `doctor --fix`) finishes it. */
  pending?: string;
  warnings?: string[];
  /** Notes of a window whose plan was refused for an order no note states as a fact (model-output/directives.ts). */
  suspect_notes?: string[];
  /** Notes consolidated without the plan saying what became of them (provenance.ts): cited by no change, given no disposition. */
  unaccounted_notes?: string[];
  [field: string]: unknown;
}
