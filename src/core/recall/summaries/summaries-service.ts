import type { LlmClient } from '../../../llm/types.js';
import { invalid, isLiveMemError } from '../../../shared/errors.js';
import { authorize, type Caller } from '../../caller.js';
import type { CoreContext } from '../../context.js';
import { requireSpace } from '../../space-meta.js';
import { meteredCalls } from '../../spend/meter.js';
import { validateSpaceId } from '../../validate.js';
import type { Corpus } from '../../note/corpus.js';
import type { SummaryJobRecord, RunSettings, SummariesProgress, SummariesResult } from './run-types.js';
import type { Strategy } from './plan.js';
import { MAX_LEVEL, type SummaryRecord } from '../../derived/summary-record.js';
import { runSummaries } from './runner.js';
import { loadSummaries } from '../../derived/summary-store.js';
import { requireModel } from '../../model.js';
import { doesOf, lockSummaries, newPass, type Pass } from './pass.js';
import { readSummary } from './read-summary.js';

export interface SummariesUpdateInput {
  space_id: string;
  strategy?: Strategy;
  /** Highest level to build (1-6); default 6. */
  level?: number;
  window_chars?: number;
  min_flush_chars?: number;
  group_chars?: number;
  wiggle?: number;
  flush_after_ms?: number;
  concurrency?: number;
  batch_delay_ms?: number;
  dry_run?: boolean;
}

export interface SummariesOptions {
  /** A model for this call only (e.g. MCP sampling), used when none is configured. */
  llm?: LlmClient;
  onProgress?: (event: SummariesProgress) => void;
}

/** Seed 003's defaults. */
const DEFAULT_WIGGLE = 0.2;
const DEFAULT_FLUSH_AFTER_MS = 20 * 60_000;
const DEFAULT_CONCURRENCY = 3;
const DEFAULT_BATCH_DELAY_MS = 1_500;
const PREVIEW_CHARS = 300;

function number(name: string, value: number | undefined, fallback: number, min: number, max: number, integer = true): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    throw invalid(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** The run's settings from the input and the configured defaults; bad input throws before anything is done. */
export function runSettings(input: SummariesUpdateInput, defaults: { windowChars: number; groupChars: number }): RunSettings {
  const strategy = input.strategy ?? 'incremental';
  if (strategy !== 'incremental' && strategy !== 'full') throw invalid(`strategy must be incremental or full, got ${JSON.stringify(strategy)}`);
  if (input.dry_run !== undefined && typeof input.dry_run !== 'boolean') throw invalid('dry_run must be true or false');
  const windowChars = number('window_chars', input.window_chars, defaults.windowChars, 500, 200_000);
  return {
    params: {
      windowChars,
      minFlushChars: number('min_flush_chars', input.min_flush_chars, Math.round(windowChars / 2), 0, windowChars),
      groupChars: number('group_chars', input.group_chars, defaults.groupChars, 500, 500_000),
      wiggle: number('wiggle', input.wiggle, DEFAULT_WIGGLE, 0, 0.5, false),
      flushAfterMs: number('flush_after_ms', input.flush_after_ms, DEFAULT_FLUSH_AFTER_MS, 0, 30 * 86_400_000),
    },
    strategy,
    maxLevel: number('level', input.level, MAX_LEVEL, 1, MAX_LEVEL),
    concurrency: number('concurrency', input.concurrency, DEFAULT_CONCURRENCY, 1, 16),
    batchDelayMs: number('batch_delay_ms', input.batch_delay_ms, DEFAULT_BATCH_DELAY_MS, 0, 60_000),
    dryRun: input.dry_run ?? false,
  };
}

/**
 * Hierarchical summaries of a space (seed 003): level 1 over windows of notes, level k over groups
 * of level k−1, kept up to date incrementally ("seal once, grow last"). One runner per space at a
 * time across processes (its own lease, apart from consolidation's); reads need only `read`.
 */
/** `lastJob`: the newest background run of a space, for summaries_list (jobs.ts keeps them). */
export function createSummariesService(context: CoreContext, corpus: Corpus, deps: { lastJob(spaceId: string): Promise<SummaryJobRecord | null> }) {
  /**
   * The pass this process runs on each space while it holds the lease (a background run after a
   * consolidation, a job, another caller's update). An update asked meanwhile in this process joins
   * it rather than answering `conflict` for work under way here: see `update`. Another process's
   * pass is known only by its lease, and still answers `conflict`.
   */
  const passes = new Map<string, Pass>();

  /**
   * Checks the call and, unless it is a dry run, resolves the model and takes the lease. The caller
   * runs it with `run` and releases with `release`.
   */
  const begin = async (caller: Caller, input: SummariesUpdateInput, options: SummariesOptions = {}) => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'write', spaceId);
    const settings = runSettings(input, context.summaries);
    await requireSpace(context, spaceId);
    const llm = settings.dryRun ? undefined : requireModel(context, options.llm, 'summaries');
    const held = settings.dryRun ? { checkLease: () => undefined, release: async () => undefined } : await lockSummaries(context, spaceId, caller);
    // A dry run writes nothing and takes no lease: nobody waits for it.
    const pass = settings.dryRun ? undefined : newPass(settings);
    if (pass) passes.set(spaceId, pass);
    let result: SummariesResult | undefined;
    return {
      spaceId,
      run: async (onProgress?: (event: SummariesProgress) => void): Promise<SummariesResult> => {
        const calls = llm ? meteredCalls(context, llm, { spaceId, purpose: 'summaries' }) : undefined;
        const own = onProgress ?? options.onProgress;
        const progress = (event: SummariesProgress) => {
          own?.(event);
          for (const follower of pass?.followers ?? []) follower(event);
        };
        result = await runSummaries({ context, corpus, spaceId, checkLease: held.checkLease, ...(calls ? { calls } : {}), onProgress: progress }, settings);
        return result;
      },
      release: async () => {
        // The lease first: a follower that wanted another update takes it as soon as it is told.
        await held.release();
        if (pass && passes.get(spaceId) === pass) passes.delete(spaceId);
        pass?.finish(result);
      },
    };
  };

  /** Every valid summary of a space, by level then time; corrupt ones are logged and left out. No auth: internal. */
  const records = async (spaceId: string): Promise<SummaryRecord[]> => {
    const levels = await loadSummaries(context, spaceId);
    return [...levels.values()]
      .flatMap((level) => [...level.records.values()].map((loaded) => loaded.record))
      .sort((a, b) => a.level - b.level || (a.range_start < b.range_start ? -1 : a.range_start > b.range_start ? 1 : a.id < b.id ? -1 : 1));
  };

  return {
    begin,
    records,

    /**
     * Brings the summaries up to date now; resolves when done. Never `ok` after a failure. While this
     * process runs a pass on the space, the call follows it (its progress too): when the pass does
     * what was asked (same strategy, sizes and levels) its result is the answer (`joined`), else —
     * or when it failed outright — the call runs its own update once the lease is free.
     */
    async update(caller: Caller, input: SummariesUpdateInput, options: SummariesOptions = {}): Promise<SummariesResult> {
      for (;;) {
        let started: Awaited<ReturnType<typeof begin>>;
        try {
          started = await begin(caller, input, options);
        } catch (error) {
          // `conflict` comes only from the lease, once the call is checked and authorised.
          const pass = isLiveMemError(error, 'conflict') ? passes.get(validateSpaceId(input.space_id)) : undefined;
          if (!pass) throw error;
          const result = await pass.follow(options.onProgress);
          if (result && pass.does === doesOf(runSettings(input, context.summaries))) return { ...result, joined: true };
          continue;
        }
        try {
          return await started.run(options.onProgress);
        } finally {
          await started.release();
        }
      }
    },

    /** Summaries of a space, newest first within each level, with a preview of each. */
    async list(caller: Caller, input: { space_id: string; level?: number }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const level = input.level === undefined ? undefined : number('level', input.level, 1, 1, MAX_LEVEL);
      await requireSpace(context, spaceId);
      const [all, lastJob] = await Promise.all([records(spaceId), deps.lastJob(spaceId)]);
      const chosen = all
        .filter((record) => level === undefined || record.level === level)
        .sort((a, b) => a.level - b.level || (a.range_end < b.range_end ? 1 : a.range_end > b.range_end ? -1 : a.id < b.id ? 1 : -1));
      return {
        status: 'ok' as const,
        space_id: spaceId,
        summaries: chosen.map((record) => ({
          id: record.id,
          level: record.level,
          sealed: record.sealed,
          range_start: record.range_start,
          range_end: record.range_end,
          covers: record.covers.length,
          chars: record.summary.length,
          chars_in: record.chars_in,
          preview: record.summary.length > PREVIEW_CHARS ? `${record.summary.slice(0, PREVIEW_CHARS)}…` : record.summary,
        })),
        total: chosen.length,
        ...(lastJob
          ? {
              last_job: {
                job_id: lastJob.job_id,
                state: lastJob.state,
                started_at: lastJob.started_at,
                updated_at: lastJob.updated_at,
                result_status: lastJob.result?.status ?? null,
              },
            }
          : {}),
      };
    },

    /** One summary whole, with what it covers: notes (L1) or child summaries (Lk) and their times. */
    read(caller: Caller, input: { space_id: string; summary_id: string }) {
      return readSummary(context, caller, input);
    },
  };
}

export type SummariesService = ReturnType<typeof createSummariesService>;
