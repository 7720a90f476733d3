import { isLiveMemError, LiveMemError } from '../../../shared/errors.js';
import type { LlmCalls } from '../../../llm/call.js';
import { askSummary, type SummaryPrompt } from './ask.js';
import { spaceKeys } from '../../layout.js';
import type { LevelPlan, Planned } from './plan.js';
import type { SummaryReply } from './prompt.js';
import { serializeRecord, SUMMARY_FORMAT, SUMMARY_FORMAT_VERSION, type SummaryRecord } from '../../derived/summary-record.js';
import type { StoredLevel } from '../../derived/summary-store.js';
import type { LevelReport, RunDeps, RunSettings, SummariesProgress, SummariesResult } from './run-types.js';

/**
 * One level of a summaries run written (runner.ts plans it): each summary to create or regenerate asked
 * of the model in batches, written compare-and-swap, the level's leftovers deleted; or, on a dry run,
 * counted. Stops at the first sign a forget happened since the run began.
 */

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

/** A dry run's level: counts what would happen; children for the next level with estimated sizes. */
export function dryLevel(plan: LevelPlan, storedLevel: StoredLevel, report: LevelReport, actions: NonNullable<SummariesResult['actions']>): SummaryRecord[] {
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
export async function writeLevel(input: WriteLevelInput): Promise<SummaryRecord[] | null> {
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
