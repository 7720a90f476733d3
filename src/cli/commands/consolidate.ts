import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import type { Session } from '../open.js';

/** A progress line on stderr (stdout keeps the result, for --json and pipes). */
function showProgress(event: ProgressEvent): void {
  const share = event.notes_total > 0 ? ` ${Math.round((event.notes_done / event.notes_total) * 100)}%` : '';
  process.stderr.write(`[consolidate${share}] ${event.message}\n`);
}

export const consolidate = ({ core, caller }: Session, spaceId: string, options: { agent?: string; quiet?: boolean }) =>
  core.consolidation.consolidate(
    caller,
    { space_id: spaceId, ...(options.agent !== undefined ? { agent: options.agent } : {}) },
    options.quiet ? {} : { onProgress: showProgress },
  );

export const consolidationStatus = ({ core, caller }: Session, spaceId: string, jobId: string | undefined) =>
  core.jobs.status(caller, { space_id: spaceId, ...(jobId !== undefined ? { job_id: jobId } : {}) });
