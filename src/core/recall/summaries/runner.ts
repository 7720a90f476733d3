import { isLiveMemError, LiveMemError } from '../../../shared/errors.js';
import type { LlmCalls } from '../../../llm/call.js';
import { LlmError } from '../../../llm/types.js';
import { newNonce } from '../../prompt-fence.js';
import { askSummary, type SummaryPrompt } from './ask.js';
import type { CoreContext } from '../../context.js';
import type { JobRecord } from '../../jobs.js';
import { spaceKeys } from '../../layout.js';
import type { Corpus, Level0Note, Level0Text } from '../../note/corpus.js';
import {
  planGroups,
  planLevel1,
  sliceText,
  slicesFor,
  acceptSealed,
  type Child,
  type LevelPlan,
  type Planned,
  type Strategy,
  type SummaryParams,
  type Unit,
  viewOf,
} from './plan.js';
import { groupMessages, level1Messages, type PromptNote, type SummaryReply } from './prompt.js';
import { parseRef, serializeRecord, SUMMARY_FORMAT, SUMMARY_FORMAT_VERSION, unitHash, type SummaryRecord } from '../../derived/summary-record.js';
import { loadSummaries, type StoredLevel } from '../../derived/summary-store.js';

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
 * `conflict` when a person forgot notes since the run began: what it read (notes, summaries below)
 * may hold their text, so it writes nothing more, and the next run plans without them.
 */
async function checkNoForget(deps: RunDeps): Promise<void> {
  await deps.corpus.sync(deps.spaceId);
  if (deps.forgets !== undefined && deps.corpus.forgotten(deps.spaceId).forgets !== deps.forgets) {
    throw new LiveMemError('conflict', `notes of '${deps.spaceId}' were forgotten during this summaries run: it stopped; the next run summarises without them`);
  }
}

/** What a dry run assumes a summary not yet written will weigh in its parent group. */
const estimateSummaryChars = (charsIn: number): number => Math.min(2_000, Math.max(200, Math.round(charsIn * 0.12)));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const unique = (items: Iterable<string>): string[] => [...new Set(items)];

/** Level-0 units, with what the prompt shows of each. Notes wholly covered by sealed summaries are not read. */
async function buildUnits(deps: RunDeps, notes: Level0Note[], level1: StoredLevel, settings: RunSettings) {
  const slicing = new Map<string, number>(); // filename → n (1 = whole) for notes covered by sealed summaries
  const coveredRefs = new Set<string>();
  if (settings.strategy === 'incremental') {
    for (const summary of acceptSealed([...level1.records.values()].map((l) => viewOf(l.record))).accepted) {
      for (const ref of summary.covers) {
        const { filename, slice } = parseRef(ref);
        slicing.set(filename, slice?.n ?? 1);
        coveredRefs.add(ref);
      }
    }
  }
  const wholly = (note: Level0Note): boolean => {
    const n = slicing.get(note.filename);
    if (n === undefined) return false;
    if (n === 1) return coveredRefs.has(note.filename);
    for (let i = 1; i <= n; i++) if (!coveredRefs.has(`${note.filename}#${i}/${n}`)) return false;
    return true;
  };
  const toRead = notes.filter((note) => !wholly(note));
  const texts = new Map<string, Level0Text>((await deps.corpus.read(deps.spaceId, toRead)).map((text) => [text.filename, text]));
  const units: Unit[] = [];
  const inputs = new Map<string, PromptNote & { agentName: string }>();
  for (const note of notes) {
    const text = texts.get(note.filename);
    const base = { filename: note.filename, stamp: note.stamp, noteId: note.id };
    if (!text) {
      if (!wholly(note)) continue; // gone since listed
      const n = slicing.get(note.filename) as number;
      for (let i = 1; i <= n; i++) units.push({ ...base, ref: n === 1 ? note.filename : `${note.filename}#${i}/${n}`, chars: 0, hash: '' });
      continue;
    }
    const n = slicing.get(note.filename) ?? slicesFor(text.content.length, settings.params);
    const slices = n === 1 ? [text.content] : sliceText(text.content, n);
    slices.forEach((slice, s) => {
      const ref = n === 1 ? note.filename : `${note.filename}#${s + 1}/${n}`;
      const input = {
        timestamp: text.timestamp,
        agent: text.agent,
        category: text.category,
        tags: text.tags,
        text: slice,
        ...(n > 1 ? { slice: { i: s + 1, n } } : {}),
      };
      units.push({ ...base, ref, chars: slice.length, hash: unitHash({ ref, ...input }) });
      inputs.set(ref, { ...input, agentName: text.agent });
    });
  }
  return { units, inputs };
}

const emptyReport = (level: number): LevelReport => ({
  level,
  summaries: 0,
  open: 0,
  created: 0,
  regenerated: 0,
  sealed: 0,
  unchanged: 0,
  deleted: 0,
  failed: 0,
});

/**
 * One summaries update of a space, under its lease (held by the caller): level 1, then each level
 * above while the one below is complete. Every summary is one atomic put — create-only where new,
 * compare-and-swap where it replaces — and a failed model call writes nothing, so its inputs stay
 * to do for the next run. Stale summaries of a level are deleted only once the whole level is
 * written. The plan is recomputed from the store each time, so a run killed anywhere is finished
 * by the next, without duplicates.
 */
export async function runSummaries(runDeps: RunDeps, settings: RunSettings): Promise<SummariesResult> {
  await runDeps.corpus.sync(runDeps.spaceId);
  const deps: RunDeps = { ...runDeps, forgets: runDeps.corpus.forgotten(runDeps.spaceId).forgets };
  const { context, spaceId, calls } = deps;
  const started = performance.now();
  const result: SummariesResult = {
    status: 'ok',
    space_id: spaceId,
    strategy: settings.strategy,
    dry_run: settings.dryRun,
    levels: [],
    written: 0,
    unchanged: 0,
    deleted: 0,
    failed: 0,
    notes_total: 0,
    pending_notes: 0,
    pending_chars: 0,
    llm_calls: 0,
    llm_prompt_tokens: 0,
    llm_completion_tokens: 0,
    llm_tokens_used: 0,
    duration_seconds: 0,
  };
  const failures: Array<{ level: number; id: string; error: string }> = [];
  const actions: NonNullable<SummariesResult['actions']> = [];
  const progress = (phase: SummariesProgress['phase'], level: number, done: number, total: number, message: string) =>
    deps.onProgress?.({ phase, level, done, total, message });

  try {
    const stored = await loadSummaries(context, spaceId);
    const notes = await deps.corpus.level0(spaceId);
    result.notes_total = notes.length;
    const level1 = stored.get(1) as StoredLevel;
    const { units, inputs } = await buildUnits(deps, notes, level1, settings);
    const plan1 = planLevel1({
      units,
      stored: [...level1.records.values()].map((l) => viewOf(l.record)),
      params: settings.params,
      now: context.clock(),
      strategy: settings.strategy,
    });
    result.pending_notes = new Set((plan1.pending.units > 0 ? units.slice(-plan1.pending.units) : []).map((u) => u.filename)).size;
    result.pending_chars = plan1.pending.chars;

    const promptFor = (planned: Planned, below: SummaryRecord[]): SummaryPrompt & { agents: string[] } => {
      const nonce = newNonce();
      if (planned.level === 1) {
        const notesIn = planned.covers.map((ref) => inputs.get(ref) as PromptNote & { agentName: string });
        return {
          messages: level1Messages(spaceId, notesIn, nonce),
          nonce,
          sources: planned.covers.map((ref, i) => ({ filename: ref, content: notesIn[i]?.text ?? '' })),
          agents: unique(notesIn.map((n) => n.agentName)),
        };
      }
      const children = planned.members.map((i) => below[i] as SummaryRecord);
      return {
        messages: groupMessages(spaceId, planned.level, children, nonce),
        nonce,
        sources: children.map((child) => ({ filename: child.id, content: [child.summary, ...child.key_findings].join('\n') })),
        agents: unique(children.flatMap((c) => c.agents)),
      };
    };

    let plan: LevelPlan = plan1;
    let below: SummaryRecord[] = [];
    for (let level = 1; level <= settings.maxLevel; level++) {
      const storedLevel = stored.get(level) as StoredLevel;
      if (level > 1) {
        const children: Child[] = below.map((r) => ({
          id: r.id,
          hash: r.hash,
          sealed: r.sealed,
          chars: r.summary.length,
          range_start: r.range_start,
          range_end: r.range_end,
        }));
        plan = planGroups({
          level,
          children,
          stored: [...storedLevel.records.values()].map((l) => viewOf(l.record)),
          params: settings.params,
          strategy: settings.strategy,
        });
        if (plan.summaries.length === 0 && plan.stale.length === 0 && storedLevel.corrupt.size === 0) {
          below = [];
          continue;
        }
      }
      const report = emptyReport(level);
      result.levels.push(report);
      const toWrite = plan.summaries.filter((p) => p.action !== 'keep').length;
      progress(
        'plan',
        level,
        0,
        toWrite,
        `level ${level}: ${plan.summaries.length} summaries, ${toWrite} to write, ${plan.stale.length} stale${level === 1 && plan1.pending.chars > 0 ? `, ${plan1.pending.chars} characters pending` : ''}`,
      );
      const outcome = settings.dryRun
        ? dryLevel(plan, storedLevel, report, actions)
        : await writeLevel({ deps, plan, storedLevel, report, below, promptFor, settings, failures, progress, result });
      if (outcome === null) {
        result.message = `level ${level} is incomplete (${report.failed} summaries failed): its stale summaries and the levels above are left for the next run`;
        break;
      }
      below = outcome;
    }
  } catch (error) {
    result.message = error instanceof Error ? error.message : String(error);
    if (isLiveMemError(error)) result.code = error.code;
    else if (error instanceof LlmError) result.code = 'llm_error';
    else context.logger.error('summaries update failed', { error: String((error as Error)?.stack ?? error) });
    result.failed = Math.max(result.failed, 1);
  } finally {
    if (calls) {
      result.llm_calls = calls.usage.calls;
      result.llm_prompt_tokens = calls.usage.promptTokens;
      result.llm_completion_tokens = calls.usage.completionTokens;
      result.llm_tokens_used = calls.usage.promptTokens + calls.usage.completionTokens;
    }
    result.duration_seconds = Math.round(performance.now() - started) / 1000;
  }
  result.unchanged = result.levels.reduce((sum, level) => sum + level.unchanged, 0);
  if (failures.length > 0) result.failures = failures.slice(0, 50);
  if (settings.dryRun) result.actions = actions.slice(0, 500);
  if (result.failed > 0) result.status = result.written > 0 || result.deleted > 0 ? 'partial' : 'error';
  progress(
    'done',
    0,
    result.written,
    result.written + result.failed,
    `${result.status}: ${result.written} summaries written, ${result.deleted} deleted, ${result.failed} failed`,
  );
  context.logger.info(`summaries of '${spaceId}': ${result.status}`, {
    written: result.written,
    deleted: result.deleted,
    failed: result.failed,
    llm_calls: result.llm_calls,
  });
  return result;
}

/** A dry run's level: counts what would happen; children for the next level with estimated sizes. */
function dryLevel(plan: LevelPlan, storedLevel: StoredLevel, report: LevelReport, actions: NonNullable<SummariesResult['actions']>): SummaryRecord[] {
  const next: SummaryRecord[] = [];
  for (const planned of plan.summaries) {
    count(report, planned);
    actions.push({
      level: planned.level,
      id: planned.id,
      action: planned.action,
      sealed: planned.sealed,
      covers: planned.covers.length,
      chars_in: planned.chars_in,
    });
    const existing = storedLevel.records.get(planned.replaces?.id ?? '')?.record;
    const chars = existing && planned.action !== 'create' ? existing.summary.length : estimateSummaryChars(planned.chars_in);
    next.push(draftRecord(planned, { summary: 'x'.repeat(chars), key_findings: [], topics: [], agents: [], files_mentioned: [] }, '', ''));
  }
  report.summaries = plan.summaries.length;
  report.deleted = plan.stale.length + [...storedLevel.corrupt.keys()].filter((id) => !plan.summaries.some((p) => p.id === id)).length;
  for (const stale of plan.stale)
    actions.push({ level: plan.level, id: stale.id, action: 'delete', sealed: stale.sealed, covers: stale.covers.length, chars_in: 0 });
  return next;
}

function count(report: LevelReport, planned: Planned): void {
  if (!planned.sealed) report.open++;
  if (planned.action === 'keep') report.unchanged++;
  if (planned.action === 'create') report.created++;
  if (planned.action === 'regenerate') report.regenerated++;
  if (planned.sealed && planned.action !== 'keep' && !planned.replaces?.sealed) report.sealed++;
}

function draftRecord(planned: Planned, reply: SummaryReply, createdAt: string, model: string): SummaryRecord {
  return {
    format: SUMMARY_FORMAT,
    format_version: SUMMARY_FORMAT_VERSION,
    id: planned.id,
    level: planned.level,
    sealed: planned.sealed,
    covers: planned.covers,
    range_start: planned.range_start,
    range_end: planned.range_end,
    hash: planned.hash,
    created_at: createdAt,
    summary: reply.summary,
    key_findings: reply.key_findings,
    topics: reply.topics,
    agents: reply.agents,
    files_mentioned: reply.files_mentioned,
    chars_in: planned.chars_in,
    model,
  };
}

interface WriteLevelInput {
  deps: RunDeps;
  plan: LevelPlan;
  storedLevel: StoredLevel;
  report: LevelReport;
  below: SummaryRecord[];
  promptFor: (planned: Planned, below: SummaryRecord[]) => SummaryPrompt & { agents: string[] };
  settings: RunSettings;
  failures: Array<{ level: number; id: string; error: string }>;
  progress: (phase: SummariesProgress['phase'], level: number, done: number, total: number, message: string) => void;
  result: SummariesResult;
}

/**
 * Writes one level's plan: seals without a model call, (re)generates with bounded concurrency and
 * a pause between batches, then deletes its stale summaries. Returns the level's summaries in
 * order, or null when some failed (the level is not complete).
 */
async function writeLevel(input: WriteLevelInput): Promise<SummaryRecord[] | null> {
  const { deps, plan, storedLevel, report, settings, result } = input;
  const { context, spaceId } = deps;
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const calls = deps.calls as LlmCalls;
  const final = new Map<string, SummaryRecord>();

  const put = async (record: SummaryRecord) => {
    deps.checkLease();
    await checkNoForget(deps);
    const etag = storedLevel.records.get(record.id)?.etag ?? storedLevel.corrupt.get(record.id);
    const key = keys.summary(record.level, record.id);
    await storage.put(key, serializeRecord(record), {
      contentType: 'application/json',
      ...(etag ? { ifMatch: etag } : { ifNoneMatch: '*' }),
    });
    // Checked again once written: a forget that looked for summaries before this one landed is seen now, and it goes.
    await checkNoForget(deps).catch(async (error: unknown) => {
      await storage.delete(key);
      throw error;
    });
    result.written++;
    await context.fault(`summary-written-${result.written}`);
  };

  for (const planned of plan.summaries) {
    count(report, planned);
    const existing = planned.replaces ? storedLevel.records.get(planned.replaces.id) : undefined;
    if (planned.action === 'keep' && existing) final.set(planned.id, existing.record);
    if (planned.action === 'seal' && existing) {
      const record = { ...existing.record, sealed: true };
      await put(record);
      final.set(planned.id, record);
    }
  }

  const toGenerate = plan.summaries.filter((p) => p.action === 'create' || p.action === 'regenerate');
  let done = 0;
  for (let start = 0; start < toGenerate.length; start += settings.concurrency) {
    if (start > 0 && settings.batchDelayMs > 0) await sleep(settings.batchDelayMs);
    const batch = toGenerate.slice(start, start + settings.concurrency);
    input.progress('llm', plan.level, done, toGenerate.length, `level ${plan.level}: summarising ${done + 1}-${done + batch.length} of ${toGenerate.length}`);
    await Promise.all(
      batch.map(async (planned) => {
        try {
          const { agents, ...prompt } = input.promptFor(planned, input.below);
          const { reply, model } = await askSummary(context, calls, prompt);
          const record = draftRecord(
            planned,
            { ...reply, agents: agents.length > 0 ? agents : reply.agents },
            context.clock().toISOString(),
            model || calls.llm.label,
          );
          await put(record);
          final.set(planned.id, record);
        } catch (error) {
          // The lease is lost, or the space's daily cap is reached: stop everything, the rest stays to do.
          if (isLiveMemError(error, 'conflict') || isLiveMemError(error, 'quota_exceeded')) throw error;
          report.failed++;
          result.failed++;
          const message = error instanceof Error ? error.message : String(error);
          input.failures.push({ level: plan.level, id: planned.id, error: message });
          context.logger.warn(`summary ${planned.id} of '${spaceId}' failed: ${message}; its inputs stay to do for the next run`);
        } finally {
          done++;
        }
      }),
    );
  }

  report.summaries = plan.summaries.filter((p) => final.has(p.id) || (p.replaces && storedLevel.records.has(p.replaces.id))).length;
  if (report.failed > 0) return null;
  const doomed = [...plan.stale.map((s) => s.id), ...[...storedLevel.corrupt.keys()].filter((id) => !final.has(id))];
  if (doomed.length > 0) {
    await context.fault('summaries-before-delete');
    deps.checkLease();
    await storage.deleteMany(doomed.map((id) => keys.summary(plan.level, id)));
    report.deleted = doomed.length;
    result.deleted += doomed.length;
  }
  return plan.summaries.map((p) => final.get(p.id) as SummaryRecord);
}

/**
 * A background summaries run, as stored at `{space}/_summaries/jobs/{id}.json` (see core/jobs.ts),
 * with what started it: `manual` (summaries_update with background) or `auto` (after a consolidation).
 */
export type SummaryJobRecord = JobRecord<SummariesProgress, SummariesResult> & { trigger: 'manual' | 'auto' };
