import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { LlmCalls } from '../../llm/call.js';
import type { CoreContext } from '../context.js';
import { stripFenceEcho } from '../prompt-fence.js';
import { applyPlan, type AppliedPlan, type BankSnapshot } from '../commit/apply-plan.js';
import type { ConsolidationResult } from './result.js';
import { fold, suspectsText, type WindowNote } from '../model-output/directives.js';
import { guardModelOutput } from '../model-output/model-output.js';
import { ReplyFormatError } from '../../llm/reply-json.js';
import { parsePlan, type Plan } from './plan.js';
import { accountingReminder, type buildMessages, refusalReminder, retryReminder } from './prompt.js';
import { quoteName, validateBankFilename } from '../validate.js';
import { accountingProblem, accountPlan, writtenName, type Accounting } from './provenance.js';
import { gapSize, retentionProblem, retentionReminder, retentionSummaryLine, windowRetention } from './retention.js';
import type { WindowRetention } from '../retention/check.js';
import type { Analyzer } from '../../search/analyze.js';

/**
 * One window's plan, asked for and checked before anything is committed: a reply that is no plan is
 * asked for again; a plan a guard refuses, that writes a new secret or an order no note states, or
 * that does not account for its notes, gets one more chance in the run; what is committed is a plan
 * that passed every check.
 */

/** A refusal for notes that steer the plan (model-output/directives.ts) adds its suspect notes to the result's `suspect_notes`. */
function noteSuspects(result: ConsolidationResult, error: unknown): void {
  const suspects = isLiveMemError(error) ? (error.data.directive as { suspect_notes?: string[] } | undefined)?.suspect_notes : undefined;
  if (!suspects) return;
  const all = new Set([...(result.suspect_notes ?? []), ...suspects]);
  result.suspect_notes = [...all];
}

/** What a plan says of a note that no change cites, as written into the consolidation's record. */
const DISPOSITION_TEXTS = ['reason', 'by', 'into'] as const;

/**
 * Every text of a plan that is stored, through the one gate of model output (model-output/model-output.ts): each
 * file it writes beside what the file held, the synthesis, and what it says of its notes (reasons,
 * kept in the consolidation's record). Returns the plan and its writes as they passed.
 */
function guardPlan(
  context: CoreContext,
  nonce: string,
  plan: Plan,
  applied: AppliedPlan,
  bank: BankSnapshot,
  window: { notes: WindowNote[]; synthesis: string },
) {
  const said = (plan.notes ?? []).flatMap((entry, i) => DISPOSITION_TEXTS.flatMap((field) => (entry[field] ? [{ i, field, text: entry[field] }] : [])));
  const texts = [
    ...applied.writes.map((write) => ({ where: write.filename, before: bank.files.get(write.filename)?.content ?? '', after: write.content })),
    { where: 'the synthesis', before: window.synthesis, after: plan.synthesis },
    ...said.map(({ text }) => ({ where: 'what it says of the notes', before: '', after: text })),
  ];
  const passed = guardModelOutput({ subject: 'the plan', nonce, texts, sources: window.notes, redact: context.redact });
  const writes = applied.writes.map((write, i) => ({ ...write, content: passed[i] as string }));
  const notes = plan.notes?.map((entry) => ({ ...entry }));
  said.forEach(({ i, field }, at) => Object.assign(notes?.[i] ?? {}, { [field]: passed[writes.length + 1 + at] }));
  return {
    plan: { ...plan, synthesis: passed[writes.length] as string, ...(notes ? { notes } : {}) },
    applied: { ...applied, writes },
  };
}

/** Asks for a plan; a reply that is not a usable plan gets one more chance with a stricter reminder. */
async function askPlan(calls: LlmCalls, messages: ReturnType<typeof buildMessages>, nonce: string): Promise<Plan> {
  let problem = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    const response = await calls.chat({ messages: attempt === 1 ? messages : [...messages, retryReminder(problem, nonce)], json: true });
    try {
      if (response.truncated) throw new ReplyFormatError('the reply was cut by the token limit');
      // The prompt's own fence lines copied into the reply are an echo: dropped, never a reason to refuse it.
      return parsePlan(stripFenceEcho(response.text, nonce));
    } catch (error) {
      if (!(error instanceof ReplyFormatError)) throw error;
      problem = error.message;
    }
  }
  throw new LiveMemError('llm_error', `the model returned no usable plan twice (${problem})`);
}

/** A plan that passed every guard, with what it says of its notes and what the retention check found of them. */
export interface CheckedPlan {
  plan: Plan;
  applied: AppliedPlan;
  accounting: Accounting;
  retention: WindowRetention;
}

/**
 * Asks for a plan and checks it. A refused plan (`invalid_input`: a guard, a missing heading, an
 * unseen section) gets one more chance in this run, told why; a second refusal fails the run
 * rather than leaving the next call to send the same prompt for the same refusal. A plan carrying
 * an order no note states (model-output/directives.ts) is one such refusal; its suspect notes go in the result.
 *
 * The same one more chance goes to a plan that cites notes but does not account for all of the
 * window's (or cites notes not in it, provenance.ts), and, unless LIVE_MEM_RETENTION is `report`, to
 * one that leaves out facts of notes it says it kept (the retention check, retention.ts): it is
 * sound, so it is kept, and whichever of the two plans accounts better (then keeps more) is
 * committed, what it still leaves out reported. With `refuse`, a plan that still leaves out facts
 * of notes it says it kept is refused, and the run with it. A plan that cites nothing at all (the
 * Python server's format, a model ignoring `sources`) is not asked again: it would cost every
 * window a second call for the same answer; its notes are reported unaccounted.
 */
export async function planWindow(
  context: CoreContext,
  calls: LlmCalls,
  messages: ReturnType<typeof buildMessages>,
  /** The nonce the prompt's fences carry (prompt-fence.ts). */
  nonce: string,
  bank: BankSnapshot,
  /** `analyzer`: the run's, shared by its windows' retention checks (their stems). */
  window: { notes: WindowNote[]; synthesis: string; analyzer: Analyzer },
  result: ConsolidationResult,
  warnings: string[],
): Promise<CheckedPlan> {
  const filenames = window.notes.map((note) => note.filename);
  const mode = context.retention;
  let kept: CheckedPlan | undefined;
  /** What the kept plan was asked again for. */
  let keptWhy = 'its accounting';
  const shortfall = (accounting: Accounting) => accounting.unaccounted.length + accounting.unknown.length;
  const better = (a: CheckedPlan, b: CheckedPlan) =>
    shortfall(a.accounting) < shortfall(b.accounting) || (shortfall(a.accounting) === shortfall(b.accounting) && gapSize(a.retention) < gapSize(b.retention));
  /** The plan to commit; with `refuse`, never one that leaves out facts of notes it says it kept. */
  const settle = (candidates: CheckedPlan[]): CheckedPlan => {
    const allowed = mode === 'refuse' ? candidates.filter((c) => c.retention.gaps.length === 0) : candidates;
    const best = allowed.reduce<CheckedPlan | undefined>((found, c) => (found === undefined || better(c, found) ? c : found), undefined);
    if (best) return best;
    const last = candidates.at(-1) as CheckedPlan;
    throw invalid(
      `window ${result.windows + 1}: the model's plan was refused (LIVE_MEM_RETENTION=refuse): ${retentionProblem(last.retention, last.accounting, filenames)}; the notes stay in live/`,
      { retention: last.retention.gaps },
    );
  };
  const fallBack = (why: string) => {
    warnings.push(`window ${result.windows + 1}: ${why}; the model's first plan, sound but for ${keptWhy}, is committed`);
    return settle([kept as CheckedPlan]);
  };
  for (let attempt = 1; ; attempt++) {
    let plan: Plan;
    try {
      plan = await askPlan(calls, messages, nonce);
    } catch (error) {
      if (!kept) throw error;
      return fallBack(`asking again failed (${error instanceof Error ? error.message : String(error)})`);
    }
    let checked: CheckedPlan;
    try {
      checked = await checkPlan(context, plan, nonce, bank, window);
    } catch (error) {
      result.operations_failed += plan.changes.reduce((n, c) => n + (c.action === 'edit' ? c.edits.length : 1), 0);
      noteSuspects(result, error);
      if (kept && isLiveMemError(error, 'invalid_input')) return fallBack(`the model's second plan was refused (${error.message})`);
      if (attempt >= 2 || !isLiveMemError(error, 'invalid_input')) throw error;
      warnings.push(`window ${result.windows + 1}: the model's plan was refused (${error.message}); it was asked once more`);
      messages = [...messages, refusalReminder(error.message, nonce)];
      continue;
    }
    const { problem, gaps } = planProblems(context, checked, filenames);
    if ((problem || gaps) && attempt < 2) {
      if (problem) warnings.push(`window ${result.windows + 1}: the model's plan does not account for every note (${problem}); it was asked once more`);
      if (gaps) warnings.push(`window ${result.windows + 1}: the model's plan ${retentionSummaryLine(checked.retention)}; it was asked once more`);
      kept = checked;
      keptWhy = problem ? 'its accounting' : 'the facts it leaves out';
      messages = [...messages, ...(problem ? [accountingReminder(problem, nonce)] : []), ...(gaps ? [retentionReminder(gaps, nonce)] : [])];
      continue;
    }
    return settle(kept ? [kept, checked] : [checked]);
  }
}

/**
 * Every check a plan meets before it may be committed, whoever wrote it (a model asked by planWindow,
 * or an agent, agent-plan.ts): safe file names, the bank's section edits and budgets (commit/apply-plan.ts),
 * secrets and orders no note states (model-output/model-output.ts); then what it says of its notes
 * (provenance.ts) and what of them the bank holds (retention.ts). A refusal is `invalid_input`; nothing is written.
 */
export async function checkPlan(
  context: CoreContext,
  raw: Plan,
  nonce: string,
  bank: BankSnapshot,
  window: { notes: WindowNote[]; synthesis: string; analyzer: Analyzer },
): Promise<CheckedPlan> {
  screenNames(raw, window.notes);
  // A secret that reached a note by another route (redaction off, an older version), or an order no note states, stops here.
  const { plan, applied } = guardPlan(
    context,
    nonce,
    raw,
    await applyPlan(raw, bank, { ...context.consolidation, maxFileBytes: context.limits.bankFileMaxBytes }),
    bank,
    window,
  );
  const accounting = accountPlan(
    plan,
    window.notes.map((note) => note.filename),
    writtenName(applied),
  );
  const retention = windowRetention(window, bank, applied, plan, accounting, plan.synthesis, window.analyzer);
  return { plan, applied, accounting, retention };
}

/**
 * What sends a sound plan back once: notes it does not account for (a plan citing nothing at all, the
 * Python server's format, is not sent back: its notes are reported unaccounted), and, unless
 * LIVE_MEM_RETENTION is `report`, facts of notes it says it kept that the bank does not hold.
 */
export function planProblems(context: CoreContext, checked: CheckedPlan, filenames: readonly string[]): { problem: string | null; gaps: string | null } {
  const { plan, accounting, retention } = checked;
  return {
    problem: accounting.cites && !plan.python ? accountingProblem(accounting) : null,
    gaps: context.retention === 'report' ? null : retentionProblem(retention, accounting, filenames),
  };
}

/**
 * A plan naming a file the bank cannot hold (`../x.md`, a folder) is refused by commit/apply-plan.ts; when
 * a note of the window holds that name, this refusal comes first and names the note.
 */
export function screenNames(plan: Plan, notes: readonly WindowNote[]): void {
  for (const change of plan.changes) {
    try {
      validateBankFilename(change.filename);
    } catch (error) {
      if (!isLiveMemError(error)) throw error;
      const name = fold(change.filename);
      const suspects = notes.filter((note) => fold(note.content).includes(name)).map((note) => ({ filename: note.filename }));
      if (suspects.length === 0) continue;
      throw invalid(`the plan names an unsafe file ${quoteName(change.filename)}: ${error.message}; ${suspectsText(suspects)}`, {
        directive: { file: change.filename, kind: 'path', line: change.filename, suspect_notes: suspects.map((s) => s.filename) },
      });
    }
  }
}
