import { invalid, isLiveMemError } from '../../../shared/errors.js';
import { authorize, type Caller } from '../../caller.js';
import type { CoreContext } from '../../context.js';
import { createJobs, JOB_ID } from '../../jobs.js';
import { spaceKeys } from '../../layout.js';
import { requireSpace } from '../../space-meta.js';
import { validateSpaceId } from '../../validate.js';
import type { SummariesProgress, SummariesResult, SummaryJobRecord } from './run-types.js';
import type { SummariesOptions, SummariesService, SummariesUpdateInput } from './summaries-service.js';

/**
 * Background summaries runs, like background consolidations. `auto` starts one after a
 * consolidation that committed, when summaries are on and a model is configured; a space whose
 * summaries are already being updated is skipped silently (that runner, or the next, catches up).
 */
export function createSummaryJobs(context: CoreContext, service: SummariesService) {
  const jobs = createJobs<SummariesProgress, SummariesResult>(context, {
    name: 'summaries',
    folder: (spaceId) => spaceKeys(spaceId).summaryJobs,
    lease: (spaceId) => spaceKeys(spaceId).summariesLock,
  });

  const start = async (caller: Caller, input: SummariesUpdateInput, options: SummariesOptions, trigger: SummaryJobRecord['trigger']) =>
    jobs.launch(caller, await service.begin(caller, input, options), { trigger }, options.onProgress);

  return {
    /** Starts a summaries update in the background; answers at once with its job id (or `conflict`). */
    start: (caller: Caller, input: SummariesUpdateInput, options: SummariesOptions = {}) => start(caller, input, options, 'manual'),

    /** One job, or the newest jobs of a space. */
    async status(caller: Caller, input: { space_id: string; job_id?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      if (input.job_id !== undefined && !JOB_ID.test(input.job_id)) throw invalid(`invalid job_id ${JSON.stringify(input.job_id)}`);
      await requireSpace(context, spaceId);
      return { status: 'ok' as const, space_id: spaceId, jobs: input.job_id ? [await jobs.read(spaceId, input.job_id)] : await jobs.newest(spaceId, 20) };
    },

    /** The newest job of a space, if any (summaries_list shows it). */
    last: async (spaceId: string): Promise<SummaryJobRecord | null> => ((await jobs.newest(spaceId, 1))[0] as SummaryJobRecord | undefined) ?? null,

    /**
     * After a consolidation committed: a background update of the space's summaries, when they are
     * on and a model is configured. Never throws: a held lease means another runner is on it.
     */
    auto(spaceId: string): void {
      if (!context.summaries.auto || !context.llm) return;
      const caller: Caller = { agent: 'live-mem-summaries', permissions: new Set(['write']), spaces: new Set([spaceId]), canChooseAgent: false };
      jobs.track(
        start(caller, { space_id: spaceId }, {}, 'auto').catch((error: unknown) => {
          if (!isLiveMemError(error, 'conflict'))
            context.logger.warn(`could not start the summaries of '${spaceId}' after its consolidation`, { error: String(error) });
        }),
      );
    },

    idle: jobs.idle,
  };
}

export type SummaryJobs = ReturnType<typeof createSummaryJobs>;
