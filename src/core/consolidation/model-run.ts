import { isLiveMemError } from '../../shared/errors.js';
import { LlmError, type LlmClient } from '../../llm/types.js';
import { createAnalyzer } from '../../search/analyze.js';
import { parseBankRules } from '../bank/rules.js';
import { bankBudget } from '../bank/budget.js';
import type { Caller } from '../caller.js';
import type { SpaceLock } from '../commit/space-lock.js';
import { spaceKeys } from '../layout.js';
import { meteredCalls } from '../spend/meter.js';
import type { ConsolidateInput, ConsolidateOptions, ConsolidationDeps, ProgressEvent } from './types.js';
import { consolidateWindow, type RunState, type WindowRun } from './model-window.js';
import type { ConsolidationResult } from './result.js';
import { driftOf, pendingNotes } from './window.js';

/**
 * A model's consolidation run (consolidation-service.ts begins it under the space's lease): the
 * space's live notes, window after window (model-window.ts), until none is left or one fails — and
 * then an honest result: `partial` once a window is committed, never `ok` after a failure, with the
 * tokens spent either way.
 */

/** What a failed run leaves, said after its error: never "nothing was changed" once a window is committed. */
function failureOutcome(spaceId: string, windows: number, committed: string | undefined): string {
  const before = windows > 0 ? ` (after ${windows} committed window(s))` : '';
  if (!committed) return windows > 0 ? before : '; nothing was changed';
  return (
    `${before}; consolidation ${committed} is committed; its bank writes are not all applied yet: ` +
    `the next consolidation, backup or export of '${spaceId}' finishes it, or \`live-mem doctor ${spaceId} --fix\``
  );
}

const emptyResult = (spaceId: string): ConsolidationResult => ({
  status: 'ok',
  space_id: spaceId,
  notes_processed: 0,
  notes_remaining: 0,
  bank_files_created: 0,
  bank_files_updated: 0,
  bank_files_unchanged: 0,
  operations_applied: 0,
  operations_failed: 0,
  synthesis_size: 0,
  synthesis_compressed: false,
  llm_prompt_tokens: 0,
  llm_completion_tokens: 0,
  llm_tokens_used: 0,
  llm_calls: 0,
  duration_seconds: 0,
  windows: 0,
  consolidations: [],
});

/** Fills the result's failure fields from `error`; an error that is neither the core's nor the model's is logged with its stack. */
function recordFailure(run: WindowRun, state: RunState, error: unknown): void {
  const { result, committed } = state;
  result.status = result.windows > 0 || committed ? 'partial' : 'error';
  result.message = `${error instanceof Error ? error.message : String(error)}${failureOutcome(run.spaceId, result.windows, committed)}`;
  if (committed) result.pending = committed;
  if (isLiveMemError(error)) result.code = error.code;
  else if (error instanceof LlmError) result.code = 'llm_error';
  else run.context.logger.error('consolidation failed', { error: String((error as Error)?.stack ?? error) });
}

/** Totals the run's notes, tokens, calls and time into the result, whatever happened. */
function totalRun(run: WindowRun, state: RunState, pending: number, started: number): void {
  const { result, warnings } = state;
  result.notes_remaining = pending - result.notes_processed;
  const usage = [run.calls.usage, run.synthesisCalls.usage];
  result.llm_prompt_tokens = usage.reduce((sum, u) => sum + u.promptTokens, 0);
  result.llm_completion_tokens = usage.reduce((sum, u) => sum + u.completionTokens, 0);
  result.llm_tokens_used = result.llm_prompt_tokens + result.llm_completion_tokens;
  result.llm_calls = usage.reduce((sum, u) => sum + u.calls, 0);
  result.duration_seconds = Math.round(run.context.monotonic() - started) / 1000;
  if (warnings.length > 0) result.warnings = warnings;
}

/** Runs the windows while `held.stillHeld` vouches for the lease. Never reports `ok` after a failure. */
export async function runWindows(
  { context, hooks, engine }: ConsolidationDeps,
  caller: Caller,
  input: ConsolidateInput,
  llm: LlmClient,
  options: ConsolidateOptions,
  held: SpaceLock,
): Promise<ConsolidationResult> {
  const spaceId = input.space_id;
  const started = context.monotonic();
  const state: RunState = { result: emptyResult(spaceId), warnings: [...held.warnings], changes: { files: [], synthesis: false }, committed: undefined };
  const { result } = state;
  if (held.recovered) result.recovered = held.recovered;
  const rules = (await context.storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';
  const all = await pendingNotes(context, spaceId, input.agent);
  const selected = all.slice(0, context.consolidation.maxNotes);
  const progress = (phase: ProgressEvent['phase'], message: string) =>
    options.onProgress?.({ phase, message, notes_done: result.notes_processed, notes_total: selected.length, window: result.windows + 1 });
  const run: WindowRun = {
    context,
    engine,
    caller,
    spaceId,
    rules,
    budget: bankBudget(parseBankRules(rules), context.budgets),
    llm,
    // Two purposes, two meters: the plan and the synthesis compression are recorded apart.
    calls: meteredCalls(context, llm, { spaceId, purpose: 'consolidation' }),
    synthesisCalls: meteredCalls(context, llm, { spaceId, purpose: 'synthesis' }),
    analyzer: createAnalyzer(),
    held,
    progress,
    ...driftOf(hooks, spaceId, options.checkout),
  };
  result.notes_remaining = all.length;
  progress('collect', `${all.length} live notes, ${selected.length} to consolidate`);

  let remaining = selected;
  try {
    while (remaining.length > 0) {
      const taken = await consolidateWindow(run, state, remaining);
      if (taken === undefined) break;
      remaining = remaining.slice(taken);
    }
  } catch (error) {
    recordFailure(run, state, error);
  } finally {
    totalRun(run, state, all.length, started);
  }
  progress('done', `${result.status}: ${result.notes_processed} notes consolidated in ${result.windows} window(s)`);
  if (result.windows > 0) hooks.onCommitted?.(spaceId, state.changes);
  // A headline, not the metrics: the caller gets those in the result (a CLI prints them right below),
  // and a failure's message is the caller's to report; debug logging has the whole result.
  context.logger.info(`consolidation of '${spaceId}': ${result.status}`, {
    notes_processed: result.notes_processed,
    windows: result.windows,
    llm_calls: result.llm_calls,
    ...(result.code ? { code: result.code } : {}),
  });
  context.logger.debug(`consolidation of '${spaceId}': result`, { ...result, consolidations: result.consolidations.length });
  return result;
}
