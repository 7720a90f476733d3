import { invalid } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { createJobs, JOB_ID, type JobRecord } from '../jobs.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import type { ConsolidateInput, ConsolidateOptions, ConsolidationService, ProgressEvent } from './consolidation-service.js';
import type { ConsolidationResult } from './result.js';

/** A background consolidation, as stored at `{space}/_consolidation/jobs/{id}.json` (see core/jobs.ts). */
export type ConsolidationJobRecord = JobRecord<ProgressEvent, ConsolidationResult>;

/**
 * Background consolidations: any process sharing the store can report on one; a job whose process
 * died shows as `interrupted` once its lease has expired (and the next consolidation finishes its commit).
 */
export function createConsolidationJobs(context: CoreContext, service: ConsolidationService) {
  const jobs = createJobs<ProgressEvent, ConsolidationResult>(context, {
    name: 'consolidation',
    folder: (spaceId) => spaceKeys(spaceId).jobs,
    lease: (spaceId) => spaceKeys(spaceId).lock,
  });

  return {
    /** Starts a consolidation in the background; answers at once with its job id (or `conflict`). */
    async start(caller: Caller, input: ConsolidateInput, options: ConsolidateOptions = {}) {
      return jobs.launch(caller, await service.begin(caller, input, options), {}, options.onProgress);
    },

    /** One job, or the newest jobs of a space. */
    async status(caller: Caller, input: { space_id: string; job_id?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      if (input.job_id !== undefined && !JOB_ID.test(input.job_id)) throw invalid(`invalid job_id ${JSON.stringify(input.job_id)}`);
      await requireSpace(context, spaceId);
      return { status: 'ok' as const, space_id: spaceId, jobs: input.job_id ? [await jobs.read(spaceId, input.job_id)] : await jobs.newest(spaceId, 20) };
    },

    idle: jobs.idle,
  };
}

export type ConsolidationJobs = ReturnType<typeof createConsolidationJobs>;
