import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { LlmError, type LlmClient } from '../../llm/types.js';
import { listAll } from '../../storage/list.js';
import { authorize, toAgentName, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { baseName, spaceKeys } from '../layout.js';
import { readLiveNote } from '../note/corpus.js';
import { parseNoteFile } from '../note/note-file.js';
import { compareNewestFirst, parseNoteName, stampToIso, type NoteName } from '../note-name.js';
import { loadMeta, requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { parseBankRules } from '../bank/rules.js';
import { bankBudget } from '../bank/budget.js';
import { noteText } from '../note/note-text.js';
import type { TextIndexEngine } from '../../search/types.js';
import { createAnalyzer } from '../../search/analyze.js';
import type { BankSnapshot } from '../commit/apply-plan.js';
import { fitBank, viewBankFile } from './bank-view.js';
import { applyCommit, writeCommit } from '../commit/commit.js';
import { historyId, type CommitRecord } from '../commit/record.js';
import { lockSpace, type SpaceLock } from '../commit/space-lock.js';
import type { Plan } from './plan.js';
import { planWindow } from './plan-window.js';
import type { ChangedFile } from '../events.js';
import { estimateTokens } from '../tokens.js';
import { meteredCalls } from '../spend/meter.js';
import { buildMessages, type PromptNote } from './prompt.js';
import { accountingWarnings, type Accounting } from './provenance.js';
import { requireModel } from '../model.js';
import { isoSeconds } from '../../shared/time.js';
import { readBankFiles } from '../bank/bank-files.js';
import { newNonce } from '../prompt-fence.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { compressSynthesis, countWords } from './compress.js';
import { addToSummary, retentionWarning, windowRetention, type RetentionSummary } from './retention.js';
import type { ConsolidationResult } from './result.js';

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
const CONTEXT_MARGIN_TOKENS = 1_000;
/** Fewest tokens a window of notes may get. */
const MIN_WINDOW_TOKENS = 500;

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

  /** Live notes to consolidate, oldest first, optionally one agent's only. */
  const pendingNotes = async (spaceId: string, agent: string | undefined): Promise<NoteName[]> => {
    const agents = agent ? new Set([agent, toAgentName(agent)]) : undefined;
    const names: NoteName[] = [];
    for await (const object of listAll(storage, spaceKeys(spaceId).live)) {
      const name = parseNoteName(baseName(object.key));
      if (name && (!agents || agents.has(name.agent))) names.push(name);
    }
    return names.sort((a, b) => compareNewestFirst(b, a));
  };

  /**
   * The bank as the plan is made from: each file's text with its line endings normalised, as the
   * section model reads and writes it (a Windows file of an older store is compared like with like
   * by the guards, and rewritten normalised only when the plan changes it), at the etag it was read.
   */
  const readBank = async (spaceId: string, rules: string): Promise<BankSnapshot> => {
    const files = await readBankFiles(context, spaceId);
    for (const [filename, file] of files) files.set(filename, { ...file, content: normalizeLineEndings(file.content) });
    const { appendOnly, rewrittenWhole } = parseBankRules(rules);
    return { files, appendOnly, rewrittenWhole };
  };

  /**
   * Picks the next window: as many of `names` (oldest first) as fit the model's context next to the
   * rules, synthesis and bank, with the reply's budget reserved. A note too large to fit alone is
   * sent cut, with a marker; its full text is kept in history.
   */
  const nextWindow = async (spaceId: string, names: NoteName[], llm: LlmClient, fixedTokens: number, warnings: string[]) => {
    const budget = llm.contextWindow - llm.maxOutputTokens - fixedTokens - CONTEXT_MARGIN_TOKENS;
    if (budget < MIN_WINDOW_TOKENS) {
      throw new LiveMemError(
        'invalid_input',
        `the rules, synthesis and bank alone fill the model's context (${fixedTokens} tokens of ${llm.contextWindow}, ${llm.maxOutputTokens} reserved for the reply; ` +
          `files over their budget are sent in part): raise LIVE_MEM_LLM_CONTEXT_WINDOW, use a model with a larger one, or lower the bank files' budgets`,
      );
    }
    const window: Array<{ name: NoteName; note: PromptNote; body: Buffer }> = [];
    let used = 0;
    const batch = storage.parallelism * 4;
    for (let start = 0; start < names.length; start += batch) {
      const slice = names.slice(start, start + batch);
      const bodies = await mapLimit(slice, storage.parallelism, (name) => readLiveNote(context, spaceId, name.filename));
      for (const [i, object] of bodies.entries()) {
        const name = slice[i] as NoteName;
        if (!object) continue; // gone since listed (space deleted?), or no note (too large): nothing to consolidate
        const parsed = parseNoteFile(object.body.toString('utf8'));
        const note: PromptNote = {
          timestamp: parsed.timestamp ?? stampToIso(name.stamp),
          agent: parsed.agent ?? name.agent,
          category: parsed.category ?? name.category,
          tags: parsed.tags ?? [],
          content: parsed.content,
        };
        const cost = estimateTokens(note.content) + 40;
        if (used + cost > budget) {
          if (window.length > 0) return window;
          const keep = Math.max(0, Math.floor((budget - 40) * 3.5) - 200);
          note.content = `${note.content.slice(0, keep)}\n[… ${note.content.length - keep} characters cut to fit the model's context; the full note is kept in history]`;
          warnings.push(`note ${name.filename} was too large for the model's context and was sent cut`);
          return [{ name, note, body: object.body }];
        }
        used += cost;
        window.push({ name, note, body: object.body });
      }
    }
    return window;
  };

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
    const started = performance.now();
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
    const all = await pendingNotes(spaceId, input.agent);
    const selected = all.slice(0, settings.maxNotes);
    result.notes_remaining = all.length;
    progress('collect', `${all.length} live notes, ${selected.length} to consolidate`, selected.length);

    let remaining = selected;
    /** A window committed (its record written) and not yet applied: a failure now is no "nothing changed". */
    let committed: string | undefined;
    try {
      while (remaining.length > 0) {
        const [bank, synthesisObject, { meta }] = await Promise.all([readBank(spaceId, rules), storage.get(keys.synthesis), loadMeta(context, spaceId)]);
        const synthesis = synthesisObject?.body.toString('utf8') ?? '';
        const bankFiles = [...bank.files].map(([filename, file]) => ({ filename, content: file.content })).sort((a, b) => (a.filename < b.filename ? -1 : 1));
        // Each file whole within its allowance, else in part: the bank's share of the prompt is bounded.
        const base = { spaceId, rules, synthesis, consolidationNumber: meta.consolidation_count + 1, nonce: newNonce() };
        const { allowance, fixedTokens } = fitBank(bankFiles, {
          fileTokens: budget.fileTokens,
          room: llm.contextWindow - llm.maxOutputTokens - CONTEXT_MARGIN_TOKENS,
          minNotes: MIN_WINDOW_TOKENS,
          measure: (views) => buildMessages({ ...base, notes: [], bank: views }).reduce((sum, m) => sum + estimateTokens(m.content), 0),
          engine,
        });
        const window = await nextWindow(spaceId, remaining, llm, fixedTokens, warnings);
        if (window.length === 0) break;

        progress('llm', `window ${result.windows + 1}: asking ${llm.label} to fold in ${window.length} notes`, selected.length);
        const touched = window.map((w) => noteText(w.note.content, w.note.tags));
        const views = bankFiles.map((file) => viewBankFile(file.filename, file.content, allowance(file.filename), touched, engine));
        const sent: BankSnapshot = {
          ...bank,
          partial: new Map(views.flatMap((view) => (view.partial ? [[view.filename, view.partial.elided] as const] : []))),
        };
        const messages = buildMessages({ ...base, notes: window.map((w) => w.note), bank: views });
        const notes = window.map((w) => ({ filename: w.name.filename, content: w.note.content }));
        const {
          plan,
          applied,
          accounting,
          retention: planned,
        } = await planWindow(context, calls, messages, base.nonce, sent, { notes, synthesis, analyzer }, result, warnings);
        reportAccounting(accounting, plan, result, warnings);
        if (countWords(plan.synthesis) > settings.synthesisMaxWords) progress('compress', 'compressing the synthesis', selected.length);
        const compressed = await compressSynthesis(context, synthesisCalls, plan.synthesis, notes, warnings);
        // What is committed is checked: a compression may have dropped what only the synthesis held.
        const retention =
          compressed.text === plan.synthesis ? planned : windowRetention({ notes, synthesis }, sent, applied, plan, accounting, compressed.text, analyzer);

        progress('apply', `window ${result.windows + 1}: committing ${applied.writes.length} bank files`, selected.length);
        const now = context.clock();
        const stamps = window.map((w) => w.name.stamp);
        const record: CommitRecord = {
          id: historyId(context, now),
          space_id: spaceId,
          committed_at: isoSeconds(now),
          notes: window.map((w) => w.name.filename),
          time_range: { oldest: stampToIso(stamps[0] as string), newest: stampToIso(stamps[stamps.length - 1] as string) },
          writes: applied.writes,
          synthesis: { content: compressed.text, expectedEtag: synthesisObject?.etag ?? null },
          metrics: { notes: window.length, operations: applied.operations, files: applied.writes.length, by: caller.agent, model: llm.label },
          provenance: accounting.provenance,
          dispositions: accounting.dispositions,
          retention: retention.entries,
        };
        await context.fault('before-commit');
        await held.stillHeld();
        await writeCommit(context, record);
        committed = record.id;
        await context.fault('after-commit');
        await applyCommit(context, record, new Map(window.map((w) => [w.name.filename, w.body])));
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
      result.duration_seconds = Math.round(performance.now() - started) / 1000;
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
