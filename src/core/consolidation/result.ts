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

const SUMMED = [
  'notes_processed',
  'bank_files_created',
  'bank_files_updated',
  'operations_applied',
  'operations_failed',
  'llm_prompt_tokens',
  'llm_completion_tokens',
  'llm_tokens_used',
  'llm_calls',
  'duration_seconds',
  'windows',
] as const;
const LISTED = ['consolidations', 'warnings', 'suspect_notes', 'unaccounted_notes'] as const;

/**
 * What two runs of one consolidation did together (the rounds of one call with the client's model):
 * counts added, lists joined, the state after them (notes remaining, synthesis, status) the later
 * run's — except that a later failure after committed windows is `partial`, never `error`.
 */
export function joinRuns(earlier: ConsolidationResult, later: ConsolidationResult): ConsolidationResult {
  const joined: ConsolidationResult = { ...later, synthesis_compressed: earlier.synthesis_compressed || later.synthesis_compressed };
  for (const field of SUMMED) joined[field] = (earlier[field] ?? 0) + (later[field] ?? 0);
  for (const field of LISTED) {
    const both = [...(earlier[field] ?? []), ...(later[field] ?? [])];
    if (both.length > 0 || field === 'consolidations') joined[field] = both;
  }
  if (earlier.recovered && !later.recovered) joined.recovered = earlier.recovered;
  if (later.status === 'error' && joined.windows > 0) joined.status = 'partial';
  return joined;
}
