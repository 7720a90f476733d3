import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import type { Session } from '../open.js';
import { percent } from '../progress.js';

export const consolidate = ({ core, caller, progress }: Session, spaceId: string, options: { onlyAgent?: string }) => {
  const only = options.onlyAgent;
  return core.consolidation.consolidate(
    caller,
    { space_id: spaceId, ...(only !== undefined ? { agent: only } : {}) },
    {
      onProgress: (event: ProgressEvent) => progress.update(`consolidate ${spaceId} ${percent(event.notes_done, event.notes_total) || '…'} · ${event.message}`),
    },
  );
};

export const consolidationStatus = ({ core, caller }: Session, spaceId: string, jobId: string | undefined) =>
  core.jobs.status(caller, { space_id: spaceId, ...(jobId !== undefined ? { job_id: jobId } : {}) });
