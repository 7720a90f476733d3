import { isLiveMemError } from '../../../shared/errors.js';
import { LlmError } from '../../../llm/types.js';
import { newNonce } from '../../prompt-fence.js';
import type { SummaryPrompt } from './ask.js';
import type { Level0Note, Level0Text } from '../../note/corpus.js';
import { planGroups, planLevel1, sliceText, slicesFor, acceptSealed, type Child, type LevelPlan, type Planned, type Unit, viewOf } from './plan.js';
import { groupMessages, level1Messages, type PromptNote } from './prompt.js';
import { parseRef, unitHash, type SummaryRecord } from '../../derived/summary-record.js';
import { loadSummaries, type StoredLevel } from '../../derived/summary-store.js';
import type { LevelReport, RunDeps, RunSettings, SummariesProgress, SummariesResult } from './run-types.js';
import { dryLevel, writeLevel } from './write-level.js';

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
  const started = context.monotonic();
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
    result.duration_seconds = Math.round(context.monotonic() - started) / 1000;
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
