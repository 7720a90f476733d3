import { hostname } from 'node:os';
import { invalid, isLiveMemError, LiveMemError } from '../../../shared/errors.js';
import { authorize, type Caller } from '../../caller.js';
import type { CoreContext } from '../../context.js';
import { spaceKeys } from '../../layout.js';
import { toStamp } from '../../note/note-name.js';
import { requireSpace } from '../../space/meta.js';
import { validateSpaceId } from '../../validate.js';
import { JOB_ID, jobKeys, readJobs, withLiveness, type SummaryJobRecord } from './job-records.js';
import type { SummariesProgress, SummariesResult } from './runner.js';
import type { SummariesOptions, SummariesService, SummariesUpdateInput } from './summaries-service.js';

/** Progress is written at most this often (plus at every phase change and at the end). */
const PROGRESS_WRITE_MS = 1_000;
/** Job records kept per space. */
const KEEP_JOBS = 50;

/**
 * Background summaries runs, like background consolidations: the state lives in the store, so
 * any process can follow a job. `auto` starts one after a consolidation that committed, when
 * summaries are on and a model is configured; a space whose summaries are already being updated
 * is skipped silently (that runner, or the next, catches up).
 */
export function createSummaryJobs(context: CoreContext, service: SummariesService) {
  const { storage } = context;
  const running = new Set<Promise<void>>();
  const put = (record: SummaryJobRecord) =>
    storage.put(spaceKeys(record.space_id).summaryJob(record.job_id), `${JSON.stringify(record, null, 2)}\n`, { contentType: 'application/json' });
  /** One job's saves, one after the other: a progress save still in flight must not land after the final state. */
  const saver = (record: SummaryJobRecord) => {
    let last: Promise<unknown> = Promise.resolve();
    return (): Promise<void> => {
      const body = { ...record };
      const next = last.catch(() => undefined).then(() => put(body));
      last = next;
      return next.then(() => undefined);
    };
  };

  const prune = async (spaceId: string): Promise<void> => {
    const old = (await jobKeys(context, spaceId)).slice(KEEP_JOBS);
    if (old.length > 0) await storage.deleteMany(old);
  };

  const start = async (caller: Caller, input: SummariesUpdateInput, options: SummariesOptions = {}, trigger: SummaryJobRecord['trigger'] = 'manual') => {
    const started = await service.begin(caller, input, options);
    const now = context.clock().toISOString();
    const record: SummaryJobRecord = {
      job_id: `${toStamp(context.clock())}-${context.randomId()}`,
      space_id: started.spaceId,
      state: 'running',
      trigger,
      started_at: now,
      updated_at: now,
      runner: `${caller.agent}@${hostname()}:${process.pid}`,
      progress: null,
      result: null,
    };
    const save = saver(record);
    try {
      await save();
    } catch (error) {
      await started.release();
      throw error;
    }
    let lastWrite = 0;
    let lastPhase = '';
    const onProgress = (event: SummariesProgress) => {
      options.onProgress?.(event);
      record.progress = event;
      const now = Date.now();
      if (event.phase === lastPhase && now - lastWrite < PROGRESS_WRITE_MS) return;
      lastWrite = now;
      lastPhase = event.phase;
      record.updated_at = context.clock().toISOString();
      save().catch((error: unknown) => context.logger.warn('could not save summaries job progress', { error: String(error) }));
    };
    const work = (async () => {
      try {
        record.result = await started.run(onProgress);
        record.state = record.result.status;
      } catch (error) {
        record.state = 'error';
        record.result = { status: 'error', message: error instanceof Error ? error.message : String(error) } as SummariesResult;
      } finally {
        await started.release();
        record.updated_at = context.clock().toISOString();
        await save().catch((error: unknown) => context.logger.error('could not save the summaries job result', { error: String(error) }));
        await prune(record.space_id).catch(() => undefined);
      }
    })();
    running.add(work);
    void work.finally(() => running.delete(work));
    return { status: 'ok' as const, space_id: record.space_id, job_id: record.job_id, state: record.state, started_at: record.started_at };
  };

  return {
    /** Starts a summaries update in the background; answers at once with its job id (or `conflict`). */
    start: (caller: Caller, input: SummariesUpdateInput, options: SummariesOptions = {}) => start(caller, input, options, 'manual'),

    /** One job, or the newest jobs of a space. */
    async status(caller: Caller, input: { space_id: string; job_id?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      if (input.job_id !== undefined && !JOB_ID.test(input.job_id)) throw invalid(`invalid job_id ${JSON.stringify(input.job_id)}`);
      await requireSpace(context, spaceId);
      if (input.job_id) {
        const object = await storage.get(spaceKeys(spaceId).summaryJob(input.job_id));
        if (!object) throw new LiveMemError('not_found', `no summaries job '${input.job_id}' in space '${spaceId}'`, { space_id: spaceId, job_id: input.job_id });
        return { status: 'ok' as const, space_id: spaceId, jobs: [await withLiveness(context, JSON.parse(object.body.toString('utf8')) as SummaryJobRecord)] };
      }
      return { status: 'ok' as const, space_id: spaceId, jobs: await readJobs(context, spaceId, 20) };
    },

    /**
     * After a consolidation committed: a background update of the space's summaries, when they are
     * on and a model is configured. Never throws: a held lease means another runner is on it.
     */
    auto(spaceId: string): void {
      if (!context.summaries.auto || !context.llm) return;
      const caller: Caller = { agent: 'live-mem-summaries', permissions: new Set(['write']), spaces: new Set([spaceId]), canChooseAgent: false };
      const starting: Promise<void> = start(caller, { space_id: spaceId }, {}, 'auto').then(
        () => undefined,
        (error: unknown) => {
          if (!isLiveMemError(error, 'conflict')) context.logger.warn(`could not start the summaries of '${spaceId}' after its consolidation`, { error: String(error) });
        },
      );
      running.add(starting);
      void starting.finally(() => running.delete(starting));
    },

    /** Resolves when the background runs of this process are done (before the process exits). */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}

export type SummaryJobs = ReturnType<typeof createSummaryJobs>;
