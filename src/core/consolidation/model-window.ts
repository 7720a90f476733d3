import { LiveMemError } from '../../shared/errors.js';
import type { LlmCalls } from '../../llm/call.js';
import type { LlmClient } from '../../llm/types.js';
import type { Analyzer } from '../../search/analyze.js';
import type { TextIndexEngine } from '../../search/types.js';
import type { BankBudget } from '../bank/budget.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { commitAndApply } from '../commit/commit.js';
import type { SpaceLock } from '../commit/space-lock.js';
import type { NoteName } from '../note-name.js';
import { rollForwardConsolidation } from './commit-kind.js';
import { compressSynthesis, countWords } from './compress.js';
import type { CommittedChanges, ProgressEvent } from './types.js';
import type { Plan } from './plan.js';
import { planWindow } from './plan-window.js';
import { type Accounting, accountingWarnings } from './provenance.js';
import type { ConsolidationResult } from './result.js';
import { addToSummary, type RetentionSummary, retentionWarning, windowRetention } from './retention.js';
import { type DraftOptions, draftWindow } from './window.js';
import { windowRecord } from './window-record.js';

/**
 * One window of a model's consolidation run (model-run.ts): drafted to fit the model's context,
 * planned by the model, its synthesis compressed when too long, committed through the one commit
 * protocol, then added to the run's result. Its own module so the run reads as its loop and its
 * failure handling, and a window's steps read in the order they happen.
 */

/** Tokens kept free in the context window for the prompt's own wording and estimation error. */
export const CONTEXT_MARGIN_TOKENS = 1_000;

/** What every window of one run shares: the space, its rules and budget, the model and its meters, the lease. */
export interface WindowRun {
  context: CoreContext;
  engine: TextIndexEngine;
  caller: Caller;
  spaceId: string;
  rules: string;
  budget: BankBudget;
  llm: LlmClient;
  /** The plan's calls and the synthesis compression's, metered apart. */
  calls: LlmCalls;
  synthesisCalls: LlmCalls;
  /** The run's windows read the same bank: the retention check's stems are worked out once (retention.ts). */
  analyzer: Analyzer;
  held: SpaceLock;
  progress: (phase: ProgressEvent['phase'], message: string) => void;
  /** The bank's statements whose code moved on in the consolidating checkout (window.ts driftOf). */
  drift?: DraftOptions['drift'];
}

/** What the run has done so far, which a window adds to and a failure reports. */
export interface RunState {
  result: ConsolidationResult;
  warnings: string[];
  changes: CommittedChanges;
  /** A window committed (its record written) and not yet applied: a failure now is no "nothing changed". */
  committed: string | undefined;
}

/** What a window's accounting leaves to report (provenance.ts): in the result and its warnings, never hidden. */
function reportAccounting(accounting: Accounting, plan: Plan, result: ConsolidationResult, warnings: string[]): void {
  if (accounting.unaccounted.length > 0) result.unaccounted_notes = [...(result.unaccounted_notes ?? []), ...accounting.unaccounted];
  warnings.push(...accountingWarnings(accounting, plan, `window ${result.windows + 1}`));
}

/** Consolidates the first window of `remaining` into `state`; the number of notes it took, or `undefined` when none is left to draft. */
export async function consolidateWindow(run: WindowRun, state: RunState, remaining: NoteName[]): Promise<number | undefined> {
  const { context, llm, held, spaceId, analyzer } = run;
  const { result, warnings, changes } = state;
  const draft = await draftWindow(context, {
    spaceId,
    rules: run.rules,
    budget: run.budget,
    names: remaining,
    room: llm.contextWindow - llm.maxOutputTokens - CONTEXT_MARGIN_TOKENS,
    where: "the model's context",
    tooSmall: (fixedTokens) =>
      new LiveMemError(
        'invalid_input',
        `the rules, synthesis and bank alone fill the model's context (${fixedTokens} tokens of ${llm.contextWindow}, ${llm.maxOutputTokens} reserved for the reply; ` +
          `files over their budget are sent in part): raise LIVE_MEM_LLM_CONTEXT_WINDOW, use a model with a larger one, or lower the bank files' budgets`,
      ),
    warnings,
    engine: run.engine,
    ...(run.drift ? { drift: run.drift } : {}),
  });
  if (!draft) return undefined;
  const window = draft.entries;
  const { synthesis, sent } = draft;

  run.progress('llm', `window ${result.windows + 1}: asking ${llm.label} to fold in ${window.length} notes`);
  const notes = window.map((w) => ({ filename: w.name.filename, content: w.note.content }));
  const {
    plan,
    applied,
    accounting,
    retention: planned,
  } = await planWindow(context, run.calls, draft.messages, draft.nonce, sent, { notes, synthesis, analyzer }, result, warnings);
  reportAccounting(accounting, plan, result, warnings);
  if (countWords(plan.synthesis) > context.consolidation.synthesisMaxWords) run.progress('compress', 'compressing the synthesis');
  const compressed = await compressSynthesis(context, run.synthesisCalls, plan.synthesis, notes, warnings);
  // What is committed is checked: a compression may have dropped what only the synthesis held.
  const retention =
    compressed.text === plan.synthesis ? planned : windowRetention({ notes, synthesis }, sent, applied, plan, accounting, compressed.text, analyzer);

  run.progress('apply', `window ${result.windows + 1}: committing ${applied.writes.length} bank files`);
  const record = windowRecord(context, {
    spaceId,
    entries: window,
    applied,
    synthesis: { content: compressed.text, expectedEtag: draft.synthesisEtag },
    accounting,
    retention,
    by: run.caller.agent,
    model: llm.label,
  });
  const bodies = new Map(window.map((w) => [w.name.filename, w.body]));
  await commitAndApply(
    context,
    held,
    record,
    () => rollForwardConsolidation(context, record, bodies),
    (id) => {
      state.committed = id;
    },
  );
  state.committed = undefined;

  for (const write of applied.writes) {
    if (!changes.files.some((file) => file.filename === write.filename)) changes.files.push({ filename: write.filename, kind: write.kind });
  }
  changes.synthesis ||= compressed.text !== synthesis;
  result.windows++;
  result.consolidations.push(record.id);
  result.notes_processed += window.length;
  result.bank_files_created += applied.writes.filter((w) => w.kind === 'created').length;
  result.bank_files_updated += applied.writes.filter((w) => w.kind === 'updated').length;
  result.bank_files_unchanged = applied.unchanged;
  result.operations_applied += applied.operations;
  result.synthesis_size = Buffer.byteLength(compressed.text);
  result.synthesis_compressed ||= compressed.compressed;
  result.retention = addToSummary(result.retention as RetentionSummary | undefined, context.retention, retention.entries);
  const lost = retentionWarning(retention.entries, `window ${result.windows}`, context.retention);
  if (lost) warnings.push(lost);
  return window.length;
}
