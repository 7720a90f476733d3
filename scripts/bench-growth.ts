/**
 * Section 15 of the benchmark (run by bench.ts): a long-lived space. 100 consolidations of 30 notes
 * (3,000 generated facts, progress entries and decisions, each with an id and a word of its own),
 * folded in by a scripted model that adds every note to the bank as a dated line
 * (bench-growth-model.ts): with `LIVE_MEM_COMPACTION=auto`, then `off`, then `off` with a
 * 200,000-token window, where a bank without compaction still fits (so its cost can be compared).
 *
 * The core is opened as the CLI and the MCP server open it (cli/open.ts: settings from the
 * environment, the real `openai` adapter on the scripted server, a 32,768-token context window,
 * summaries off), so the compaction setting reaches it however the core wires it; on a build
 * without compaction both runs are the same. After each consolidation the run waits for background
 * work (`core.idle()`) before writing the next window's notes.
 *
 * The model keeps every note, so every note the retention check (core/retention, LIVE_MEM_RETENTION at
 * its default, retry) flags is a false flag: `growth_retention_false_flags` counts the notes the first
 * check of each window named (the reminder the model is sent), over the notes the plans kept.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Opened, openCore } from '../src/cli/open.js';
import { ownerCaller } from '../src/core/caller.js';
import { measureTokens } from '../src/core/bank/budget.js';
import { isLiveMemError } from '../src/shared/errors.js';
import { atLeast, atMost, figure, freshHome, progress, type Figure } from './bench-lib.js';
import { type ModelCall, startGrowthModel } from './bench-growth-model.js';
import { seeded } from './bench-text.js';
import type { RetentionSummary } from '../src/core/consolidation/retention.js';

/** What space_summary holds besides the bank (rules, synthesis, the space's info), allowed on top of the bank's budget. */
const SUMMARY_BEYOND_BANK = 2_000;

const CONSOLIDATIONS = 100;
const NOTES_PER_CONSOLIDATION = 30;
const CHECKPOINTS = [1, 10, 50, 100] as const;
const CONTEXT_WINDOW = 32_768;
/** The window with which the issue saw a space without compaction keep working: the cost that avoids. */
const LARGE_CONTEXT_WINDOW = 200_000;
const SPACE = 'growth';
const FIRST_DAY = Date.UTC(2026, 0, 1);
const DAY_MS = 24 * 60 * 60 * 1000;
/** ±20% of each other: the largest at most 1.2 times the smallest. */
const PROMPT_SPREAD = 1.2;
/** Issue 33's target: at most this share of the notes a model kept flagged by the retention check. */
const RETENTION_FALSE_FLAGS = 0.05;
/** A consolidation that meets a compaction holding the space's lease waits and tries again. */
const CONFLICT_RETRIES = 50;

// ---------------------------------------------------------------------------------------------
// The notes: in each window ten facts, ten progress entries and ten decisions, interleaved

type Kind = 'fact' | 'progress' | 'decision';
const KINDS: Kind[] = ['fact', 'progress', 'decision'];
const CATEGORY: Record<Kind, string> = { fact: 'observation', progress: 'progress', decision: 'decision' };
const NOUNS = `cache queue worker token session schema index shard replica lease snapshot backup archive bucket config
  flag rollout metric alert dashboard trace socket gateway router handler endpoint tenant billing invoice ranking
  cursor stream topic consumer offset partition payload budget pipeline runner scheduler storage region`.split(/\s+/);

export interface GrowthNote {
  id: string;
  kind: Kind;
  category: string;
  content: string;
  /** The words it is searched by: its own made-up word and a noun of its sentence. */
  query: string;
}

/** 3,000 made-up words, all different: one per note, so each note has a word no other holds. */
function ownWords(count: number): string[] {
  const random = seeded(19);
  const pick = (letters: string) => letters[Math.floor(random() * letters.length)] as string;
  const words = new Set<string>();
  while (words.size < count) {
    let word = '';
    for (let s = 0; s < 3; s++) word += pick('bdfgklmnprstvz') + pick('aeiou') + pick('lmnrstx');
    words.add(word);
  }
  return [...words];
}

export function growthNotes(): GrowthNote[][] {
  const random = seeded(20);
  const noun = () => NOUNS[Math.floor(random() * NOUNS.length)] as string;
  const words = ownWords(CONSOLIDATIONS * NOTES_PER_CONSOLIDATION);
  const counters: Record<Kind, number> = { fact: 0, progress: 0, decision: 0 };
  return Array.from({ length: CONSOLIDATIONS }, (_, c) => {
    const date = new Date(FIRST_DAY + c * DAY_MS).toISOString().slice(0, 10);
    return Array.from({ length: NOTES_PER_CONSOLIDATION }, (_, i) => {
      const kind = KINDS[i % KINDS.length] as Kind;
      const id = `${kind[0]}${String(++counters[kind]).padStart(4, '0')}`;
      const word = words[c * NOTES_PER_CONSOLIDATION + i] as string;
      const [a, b, d, e] = [noun(), noun(), noun(), noun()];
      const sentence = {
        fact: `the ${word} service keeps its ${a} in the ${b} store ${word}-${c}, read through the ${d} layer; owners check it after each ${e} change`,
        progress: `finished the ${a} work on ${word}: the ${b} path is migrated and the ${d} checks pass on staging; next comes the ${e} clean-up`,
        decision: `decided that ${word} moves its ${a} to the ${b} design, because the ${d} approach broke under ${e} load; agreed by the team`,
      }[kind];
      return { id, kind, category: CATEGORY[kind], content: `${date} ${id}: ${sentence}.`, query: `${word} ${a}` };
    });
  });
}

// ---------------------------------------------------------------------------------------------
// One run

interface Step {
  status: string;
  notes: number;
  /** Prompt tokens of the consolidation's own model calls (the scripted server's count). */
  promptTokens: number;
  bankTokens: number;
  largestFileTokens: number;
  /** Tokens of each bank file after the consolidation and its background work. */
  fileTokens: Map<string, number>;
  /** Files compacted in the background of this consolidation. */
  compacted: string[];
  /** The retention check of its notes as committed (consolidation/retention.ts): checked, let go, and flagged (partly or not retained). */
  retention: { checked: number; letGo: number; flagged: number };
}

export interface RunResult {
  steps: Step[];
  calls: ModelCall[];
  budgets: { file: number; bank: number };
  summaryTokens: number;
  newestInBank: number;
  recallAt5: number;
  seconds: number;
  /** Every bank file at the end, joined. */
  bankText: string;
}

const sumTokens = (calls: readonly ModelCall[], pick: (call: ModelCall) => number = (call) => call.promptTokens + call.completionTokens) =>
  calls.reduce((sum, call) => sum + pick(call), 0);

async function bankSize(opened: Opened): Promise<{ total: number; largest: number; files: Map<string, number>; text: string }> {
  const { files } = (await opened.core.bank.readAll(SPACE)).read;
  const tokens = new Map(files.map((file) => [file.filename, measureTokens(file.content)]));
  return {
    total: [...tokens.values()].reduce((a, b) => a + b, 0),
    largest: Math.max(0, ...tokens.values()),
    files: tokens,
    text: files.map((file) => file.content).join('\n'),
  };
}

/** One consolidation; a lease held by a background compaction is waited for, any other error is its result. */
async function consolidateOnce(opened: Opened): Promise<{ status: string; notes_processed: number; message?: string; retention?: RetentionSummary }> {
  const caller = ownerCaller('bench');
  for (let attempt = 0; ; attempt++) {
    try {
      return await opened.core.consolidation.consolidate(caller, { space_id: SPACE });
    } catch (error) {
      if (!isLiveMemError(error) || error.code !== 'conflict' || attempt >= CONFLICT_RETRIES) {
        return { status: 'error', notes_processed: 0, message: (error as Error).message };
      }
      await opened.core.idle();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function growthRun(compaction: 'auto' | 'off', windows: GrowthNote[][], contextWindow = CONTEXT_WINDOW): Promise<RunResult> {
  const home = await freshHome(`growth-${compaction}-${contextWindow}`);
  const model = await startGrowthModel();
  const env = {
    HOME: home,
    LIVE_MEM_HOME: path.join(home, 'store'),
    LIVE_MEM_AGENT: 'bench',
    LIVE_MEM_LOG_LEVEL: 'error',
    LIVE_MEM_LLM_BASE_URL: model.url,
    LIVE_MEM_LLM_MODEL: 'growth',
    LIVE_MEM_LLM_API_KEY: 'bench',
    LIVE_MEM_LLM_CONTEXT_WINDOW: String(contextWindow),
    LIVE_MEM_SUMMARIES: 'off',
    LIVE_MEM_COMPACTION: compaction,
  };
  const opened = await openCore({ quiet: true }, env);
  const { core, settings } = opened;
  const caller = ownerCaller('bench');
  const started = performance.now();
  const steps: Step[] = [];
  try {
    await core.spaces.create(caller, { space_id: SPACE });
    for (const [c, notes] of windows.entries()) {
      for (const note of notes) await core.notes.write(caller, { space_id: SPACE, category: note.category, content: note.content });
      const before = model.calls.length;
      const result = await consolidateOnce(opened);
      const during = model.calls.slice(before);
      await core.idle();
      const after = model.calls.slice(before);
      const bank = await bankSize(opened);
      steps.push({
        status: result.status,
        notes: result.notes_processed,
        promptTokens: sumTokens(
          during.filter((call) => call.purpose === 'consolidation'),
          (call) => call.promptTokens,
        ),
        bankTokens: bank.total,
        largestFileTokens: bank.largest,
        fileTokens: bank.files,
        compacted: after.flatMap((call) => (call.purpose === 'compaction' && call.file ? [call.file] : [])),
        retention: retentionOf(result.retention),
      });
      if (result.status !== 'ok' && steps.slice(0, -1).every((step) => step.status === 'ok')) {
        progress(`  ${compaction}, ${contextWindow}: consolidation ${c + 1} failed (${result.status}): ${result.message ?? ''}`);
      }
      if ((c + 1) % 10 === 0) {
        const failed = steps.filter((step) => step.status !== 'ok').length;
        progress(`  ${compaction}, ${contextWindow}: ${c + 1} consolidations, ${failed} failed, bank ${bank.total} tokens`);
      }
    }
    const bank = await bankSize(opened);
    const summary = await core.spaces.summary(caller, { space_id: SPACE });
    const newest = KINDS.map(
      (kind) =>
        windows
          .flat()
          .filter((note) => note.kind === kind)
          .at(-1)?.id as string,
    );
    const seconds = (performance.now() - started) / 1000;
    const recallAt5 = await recall(opened, windows.flat());
    return {
      steps,
      calls: [...model.calls],
      budgets: { file: settings.bankFileBudgetTokens, bank: settings.bankBudgetTokens },
      summaryTokens: measureTokens(JSON.stringify(summary)),
      newestInBank: newest.filter((id) => bank.text.includes(id)).length / newest.length,
      recallAt5,
      seconds,
      bankText: bank.text,
    };
  } finally {
    await opened.close();
    await model.close();
  }
}

const retentionOf = (counts: RetentionSummary | undefined): Step['retention'] => ({
  checked: counts?.checked ?? 0,
  letGo: counts?.let_go ?? 0,
  flagged: (counts?.partly_retained ?? 0) + (counts?.not_retained ?? 0),
});

/** Share of the notes whose id is in one of the top 5 results of memory_search for their words. */
async function recall(opened: Opened, notes: readonly GrowthNote[]): Promise<number> {
  const caller = ownerCaller('bench');
  let found = 0;
  const missed: string[] = [];
  for (const note of notes) {
    const { results } = await opened.core.recall.search(caller, { space_id: SPACE, query: note.query, limit: 5 });
    if (results.some((hit) => hit.text.includes(note.id))) found++;
    else missed.push(`${note.id} (${note.query})`);
  }
  if (missed.length > 0) progress(`  missed ${missed.length}: ${missed.slice(0, 5).join(', ')}${missed.length > 5 ? ', …' : ''}`);
  return found / notes.length;
}

// ---------------------------------------------------------------------------------------------
// Figures

/** The files the notes feed (the scripted model's routing): the bank is at its budget once each of them is. */
const FED_FILES = ['activeContext.md', 'progress.md', 'systemPatterns.md', 'techContext.md'];

/** The first consolidation by which every fed file has been compacted, or gone over its budget. */
function budgetReachedAt(run: RunResult): number | null {
  const reached = new Set<string>();
  for (const [i, step] of run.steps.entries()) {
    for (const file of step.compacted) reached.add(file);
    for (const [file, tokens] of step.fileTokens) if (tokens > run.budgets.file) reached.add(file);
    if (FED_FILES.every((file) => reached.has(file))) return i + 1;
  }
  return null;
}

/** Prompt tokens of consolidation n (1-based); null when it failed or asked nothing. */
const promptAt = (run: RunResult, n: number): number | null => {
  const step = run.steps[n - 1];
  return step && step.status === 'ok' && step.promptTokens > 0 ? step.promptTokens : null;
};

/** Largest over smallest prompt among the checkpoints past the budget; null if one of them failed or fewer than two. */
function promptSpread(run: RunResult): number | null {
  const reached = budgetReachedAt(run);
  if (reached === null) return null;
  const values = CHECKPOINTS.filter((n) => n > reached).map((n) => promptAt(run, n));
  if (values.length < 2 || values.some((value) => value === null)) return null;
  const numbers = values as number[];
  return Math.max(...numbers) / Math.min(...numbers);
}

function runFigures(run: RunResult, key: string, label: string): Figure[] {
  const failures = run.steps.filter((step) => step.status !== 'ok');
  const firstFailure = run.steps.findIndex((step) => step.status !== 'ok');
  const last = run.steps.at(-1);
  const consolidationTokens = sumTokens(run.calls.filter((call) => call.purpose === 'consolidation'));
  const compactions = run.calls.filter((call) => call.purpose === 'compaction');
  const notes = run.steps.reduce((sum, step) => sum + step.notes, 0);
  const late = Array.from({ length: CONSOLIDATIONS - 49 }, (_, i) => promptAt(run, 50 + i));
  const lateSpread = late.some((value) => value === null) ? null : Math.max(...(late as number[])) / Math.min(...(late as number[]));
  // The model keeps every note: any note the retention check flags is a false flag. The first check of a
  // window is what LIVE_MEM_RETENTION=retry acts on (the notes its reminder names); what is committed after it, the second.
  const kept = run.steps.reduce((sum, step) => sum + step.retention.checked - step.retention.letGo, 0);
  const firstFlagged = run.calls.reduce((sum, call) => sum + (call.retentionFlagged ?? 0), 0);
  const committedFlagged = run.steps.reduce((sum, step) => sum + step.retention.flagged, 0);
  return [
    figure(`${key}_failures`, `${label}: consolidations failed (of ${CONSOLIDATIONS})`, failures.length, 'ratio', atMost(0)),
    figure(`${key}_first_failure`, '  first failed consolidation', firstFailure < 0 ? null : firstFailure + 1, 'ratio'),
    ...CHECKPOINTS.map((n) => figure(`${key}_prompt_tokens_${n}`, `  prompt tokens, consolidation ${n}`, promptAt(run, n), 'tokens')),
    figure(`${key}_budget_reached_at`, '  bank at its budget (every file fed compacted or over budget) at consolidation', budgetReachedAt(run), 'ratio'),
    figure(`${key}_prompt_spread`, '  prompt tokens of those past it, largest / smallest', promptSpread(run), 'x', atMost(PROMPT_SPREAD)),
    figure(`${key}_prompt_spread_50_100`, '  prompt tokens of consolidations 50–100, largest / smallest', lateSpread, 'x'),
    figure(`${key}_bank_tokens`, `  bank at ${CONSOLIDATIONS}`, last?.bankTokens ?? null, 'tokens', atMost(run.budgets.bank)),
    figure(`${key}_largest_file_tokens`, `  largest bank file at ${CONSOLIDATIONS}`, last?.largestFileTokens ?? null, 'tokens', atMost(run.budgets.file)),
    // space_summary carries the rules, the synthesis and the space's info besides the bank: 2,000 tokens are allowed for them.
    figure(
      `${key}_space_summary_tokens`,
      `  space_summary at ${CONSOLIDATIONS} (bank budget + 2,000 for rules, synthesis, info)`,
      run.summaryTokens,
      'tokens',
      atMost(run.budgets.bank + SUMMARY_BEYOND_BANK),
    ),
    figure(
      `${key}_recall_at5`,
      `  recall@5, memory_search (${CONSOLIDATIONS * NOTES_PER_CONSOLIDATION} notes by their words)`,
      run.recallAt5,
      'ratio',
      atLeast(1),
    ),
    figure(`${key}_newest_in_bank`, '  newest fact, progress entry and decision in the bank', run.newestInBank, 'ratio', atLeast(1)),
    figure(`${key}_total_tokens`, '  model tokens in all (prompt + completion)', sumTokens(run.calls), 'tokens'),
    figure(`${key}_consolidation_tokens`, '    of which consolidation', consolidationTokens, 'tokens'),
    figure(`${key}_compaction_tokens`, `    of which compaction (${compactions.length} calls)`, sumTokens(compactions), 'tokens'),
    figure(`${key}_notes_consolidated`, '  notes consolidated', notes, 'ratio'),
    figure(`${key}_retention_kept`, '  notes the plans kept, by the retention check (integrated or superseded)', kept, 'ratio'),
    figure(
      `${key}_retention_false_flags`,
      '  kept notes flagged by the retention check, first check of each window',
      kept > 0 ? firstFlagged / kept : null,
      'ratio',
      atMost(RETENTION_FALSE_FLAGS),
    ),
    figure(`${key}_retention_flagged_committed`, '  kept notes committed flagged (after the retry)', kept > 0 ? committedFlagged / kept : null, 'ratio'),
    figure(`${key}_tokens_per_note`, '  model tokens per note consolidated', notes > 0 ? sumTokens(run.calls) / notes : null, 'tokens'),
    figure(`${key}_run_ms`, '  run time (notes, consolidations, background work)', run.seconds * 1000, 'ms'),
  ];
}

export async function benchGrowth(): Promise<Figure[]> {
  const windows = growthNotes();
  progress(`  ${CONSOLIDATIONS} consolidations of ${NOTES_PER_CONSOLIDATION} notes, context window ${CONTEXT_WINDOW} tokens, LIVE_MEM_COMPACTION=auto`);
  const auto = await growthRun('auto', windows);
  progress('  the same with LIVE_MEM_COMPACTION=off');
  const off = await growthRun('off', windows);
  progress(`  LIVE_MEM_COMPACTION=off with a ${LARGE_CONTEXT_WINDOW}-token context window`);
  const offLarge = await growthRun('off', windows, LARGE_CONTEXT_WINDOW);
  const total = (run: RunResult) => sumTokens(run.calls);
  const ratio = (run: RunResult) => (total(run) > 0 ? total(auto) / total(run) : null);
  return [
    ...runFigures(auto, 'growth', `long-lived space, compaction auto, ${CONTEXT_WINDOW}-token window`),
    ...runFigures(off, 'growth_off', `long-lived space, compaction off, ${CONTEXT_WINDOW}-token window`),
    ...runFigures(offLarge, 'growth_off_200k', `long-lived space, compaction off, ${LARGE_CONTEXT_WINDOW}-token window`),
    figure('growth_tokens_vs_off', `model tokens, compaction auto / off (${CONTEXT_WINDOW}-token window)`, ratio(off), 'x'),
    figure('growth_tokens_vs_off_200k', `model tokens, compaction auto / off with a ${LARGE_CONTEXT_WINDOW}-token window`, ratio(offLarge), 'x'),
  ];
}
