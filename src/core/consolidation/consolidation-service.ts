import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { LlmError, type LlmClient } from '../../llm/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { parseBankRules } from '../bank/rules.js';
import { bankBudget } from '../bank/budget.js';
import type { TextIndexEngine } from '../../search/types.js';
import { createAnalyzer } from '../../search/analyze.js';
import { writeCommit } from '../commit/commit.js';
import { rollForwardConsolidation } from './commit-kind.js';
import { lockSpace, type SpaceLock } from '../commit/space-lock.js';
import type { Plan } from './plan.js';
import { planWindow } from './plan-window.js';
import type { ChangedFile } from '../events.js';
import { meteredCalls } from '../spend/meter.js';
import { accountingWarnings, type Accounting } from './provenance.js';
import { requireModel } from '../model.js';
import { compressSynthesis, countWords } from './compress.js';
import { addToSummary, retentionWarning, windowRetention, type RetentionSummary } from './retention.js';
import type { ConsolidationResult } from './result.js';
import { draftWindow, pendingNotes } from './window.js';
import { windowRecord } from './window-record.js';

export interface ConsolidateInput {
  space_id: string;
  /** Only this agent's notes, matched exactly (never by substring). */
  agent?: string;
}

export interface ProgressEvent {
  phase: 'collect' | 'llm' | 'apply' | 'compress' | 'done';
  message: string;
  notes_done: number;
  notes_total: number;
  window: number;
}

export interface ConsolidateOptions {
  /** A model for this call only (e.g. MCP sampling), used when none is configured. */
  llm?: LlmClient;
  onProgress?: (event: ProgressEvent) => void;
}

/** Tokens kept free in the context window for the prompt's own wording and estimation error. */
export const CONTEXT_MARGIN_TOKENS = 1_000;

/** What a failed run leaves, said after its error: never "nothing was changed" once a window is committed. */
function failureOutcome(spaceId: string, windows: number, committed: string | undefined): string {
  const before = windows > 0 ? ` (after ${windows} committed window(s))` : '';
  if (!committed) return windows > 0 ? before : '; nothing was changed';
  return (
    `${before}; consolidation ${committed} is committed; its bank writes are not all applied yet: ` +
    `the next consolidation, backup or export of '${spaceId}' finishes it, or \`live-mem doctor ${spaceId} --fix\``
  );
}

/** How long a consolidation waits for a compaction holding the space's lease (one model call per file). */
const COMPACTION_WAIT_MS = 60_000;

/** What a run's committed windows wrote, all windows together. */
export interface CommittedChanges {
  /** Each bank file once: `created` when the first window that wrote it created it. */
  files: ChangedFile[];
  /** The synthesis got a new content. */
  synthesis: boolean;
}

export interface ConsolidationHooks {
  /** Called after a run that committed at least one window (e.g. to update the space's summaries); must not throw. */
  onCommitted?: (spaceId: string, changes: CommittedChanges) => void;
}

/** What a window's accounting leaves to report (provenance.ts): in the result and its warnings, never hidden. */
function reportAccounting(accounting: Accounting, plan: Plan, result: ConsolidationResult, warnings: string[]): void {
  if (accounting.unaccounted.length > 0) result.unaccounted_notes = [...(result.unaccounted_notes ?? []), ...accounting.unaccounted];
  warnings.push(...accountingWarnings(accounting, plan, `window ${result.windows + 1}`));
}

/** `engine` ranks a large bank file's sections against a window's notes (bank-view.ts). */
export function createConsolidationService(context: CoreContext, hooks: ConsolidationHooks, engine: TextIndexEngine) {
  const { storage } = context;
  const settings = context.consolidation;

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

  /** Runs the windows while `stillHeld` vouches for the lease. Never reports `ok` after a failure. */
  const run = async (caller: Caller, input: ConsolidateInput, llm: LlmClient, options: ConsolidateOptions, held: SpaceLock): Promise<ConsolidationResult> => {
    const spaceId = input.space_id;
    const keys = spaceKeys(spaceId);
    const started = context.monotonic();
    const result = emptyResult(spaceId);
    if (held.recovered) result.recovered = held.recovered;
    const warnings: string[] = [...held.warnings];
    const changes: CommittedChanges = { files: [], synthesis: false };
    // Two purposes, two meters: the plan and the synthesis compression are recorded apart.
    const calls = meteredCalls(context, llm, { spaceId, purpose: 'consolidation' });
    const synthesisCalls = meteredCalls(context, llm, { spaceId, purpose: 'synthesis' });
    const progress = (phase: ProgressEvent['phase'], message: string, total: number) =>
      options.onProgress?.({ phase, message, notes_done: result.notes_processed, notes_total: total, window: result.windows + 1 });

    // The run's windows read the same bank: the retention check's stems are worked out once (retention.ts).
    const analyzer = createAnalyzer();
    const rulesObject = await storage.get(keys.rules);
    const rules = rulesObject?.body.toString('utf8') ?? '';
    const budget = bankBudget(parseBankRules(rules), context.budgets);
    const all = await pendingNotes(context, spaceId, input.agent);
    const selected = all.slice(0, settings.maxNotes);
    result.notes_remaining = all.length;
    progress('collect', `${all.length} live notes, ${selected.length} to consolidate`, selected.length);

    let remaining = selected;
    /** A window committed (its record written) and not yet applied: a failure now is no "nothing changed". */
    let committed: string | undefined;
    try {
      while (remaining.length > 0) {
        const draft = await draftWindow(context, {
          spaceId,
          rules,
          budget,
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
          engine,
        });
        if (!draft) break;
        const window = draft.entries;
        const { synthesis, sent } = draft;

        progress('llm', `window ${result.windows + 1}: asking ${llm.label} to fold in ${window.length} notes`, selected.length);
        const notes = window.map((w) => ({ filename: w.name.filename, content: w.note.content }));
        const {
          plan,
          applied,
          accounting,
          retention: planned,
        } = await planWindow(context, calls, draft.messages, draft.nonce, sent, { notes, synthesis, analyzer }, result, warnings);
        reportAccounting(accounting, plan, result, warnings);
        if (countWords(plan.synthesis) > settings.synthesisMaxWords) progress('compress', 'compressing the synthesis', selected.length);
        const compressed = await compressSynthesis(context, synthesisCalls, plan.synthesis, notes, warnings);
        // What is committed is checked: a compression may have dropped what only the synthesis held.
        const retention =
          compressed.text === plan.synthesis ? planned : windowRetention({ notes, synthesis }, sent, applied, plan, accounting, compressed.text, analyzer);

        progress('apply', `window ${result.windows + 1}: committing ${applied.writes.length} bank files`, selected.length);
        const record = windowRecord(context, {
          spaceId,
          entries: window,
          applied,
          synthesis: { content: compressed.text, expectedEtag: draft.synthesisEtag },
          accounting,
          retention,
          by: caller.agent,
          model: llm.label,
        });
        await context.fault('before-commit');
        await held.stillHeld();
        await writeCommit(context, record);
        committed = record.id;
        await context.fault('after-commit');
        await rollForwardConsolidation(context, record, new Map(window.map((w) => [w.name.filename, w.body])));
        committed = undefined;

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
        remaining = remaining.slice(window.length);
      }
    } catch (error) {
      result.status = result.windows > 0 || committed ? 'partial' : 'error';
      result.message = `${error instanceof Error ? error.message : String(error)}${failureOutcome(spaceId, result.windows, committed)}`;
      if (committed) result.pending = committed;
      if (isLiveMemError(error)) result.code = error.code;
      else if (error instanceof LlmError) result.code = 'llm_error';
      else context.logger.error('consolidation failed', { error: String((error as Error)?.stack ?? error) });
    } finally {
      result.notes_remaining = all.length - result.notes_processed;
      const usage = [calls.usage, synthesisCalls.usage];
      result.llm_prompt_tokens = usage.reduce((sum, u) => sum + u.promptTokens, 0);
      result.llm_completion_tokens = usage.reduce((sum, u) => sum + u.completionTokens, 0);
      result.llm_tokens_used = result.llm_prompt_tokens + result.llm_completion_tokens;
      result.llm_calls = usage.reduce((sum, u) => sum + u.calls, 0);
      result.duration_seconds = Math.round(context.monotonic() - started) / 1000;
      if (warnings.length > 0) result.warnings = warnings;
    }
    progress('done', `${result.status}: ${result.notes_processed} notes consolidated in ${result.windows} window(s)`, selected.length);
    if (result.windows > 0) hooks.onCommitted?.(spaceId, changes);
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
  };

  /**
   * Checks the call and takes the space's lease: `conflict` at once if another consolidation holds
   * it. The caller runs the windows with `run` and releases the lease.
   */
  const begin = async (caller: Caller, input: ConsolidateInput, options: ConsolidateOptions) => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'write', spaceId);
    await requireSpace(context, spaceId);
    const llm = requireModel(context, options.llm, 'consolidation');
    // A compaction started in the background by the previous consolidation is waited for; another consolidation is not.
    const held = await lockSpace(context, spaceId, caller, 'consolidation', { waitMs: COMPACTION_WAIT_MS, waitFor: (holder) => holder === 'compaction' });
    return {
      spaceId,
      run: (onProgress?: (event: ProgressEvent) => void) =>
        run(caller, { ...input, space_id: spaceId }, llm, { ...options, ...(onProgress ? { onProgress } : {}) }, held),
      release: held.release,
    };
  };

  return {
    begin,

    /** Consolidates now; resolves when done. */
    async consolidate(caller: Caller, input: ConsolidateInput, options: ConsolidateOptions = {}): Promise<ConsolidationResult> {
      const started = await begin(caller, input, options);
      try {
        return await started.run(options.onProgress);
      } finally {
        await started.release();
      }
    },
  };
}

export type ConsolidationService = ReturnType<typeof createConsolidationService>;
