import type { SummariesProgress } from '../../core/recall/summaries/runner.js';
import type { Session } from '../open.js';
import { percent } from '../progress.js';

export interface SummariesUpdateFlags {
  full?: boolean;
  level?: number;
  windowChars?: number;
  minFlushChars?: number;
  groupChars?: number;
  wiggle?: number;
  flushAfterMs?: number;
  concurrency?: number;
  batchDelayMs?: number;
  dryRun?: boolean;
}

export const summariesUpdate = ({ core, caller, progress }: Session, spaceId: string, flags: SummariesUpdateFlags) => {
  const numbers = {
    level: flags.level,
    window_chars: flags.windowChars,
    min_flush_chars: flags.minFlushChars,
    group_chars: flags.groupChars,
    wiggle: flags.wiggle,
    flush_after_ms: flags.flushAfterMs,
    concurrency: flags.concurrency,
    batch_delay_ms: flags.batchDelayMs,
  };
  const given = Object.fromEntries(Object.entries(numbers).filter(([, value]) => value !== undefined));
  return core.summaries.update(
    caller,
    { space_id: spaceId, strategy: flags.full ? 'full' : 'incremental', dry_run: flags.dryRun === true, ...given },
    {
      onProgress: (event: SummariesProgress) =>
        progress.update(`summaries ${spaceId}${event.level > 0 ? ` L${event.level}` : ''} ${percent(event.done, event.total) || '…'} · ${event.message}`),
    },
  );
};

export const summariesList = ({ core, caller }: Session, spaceId: string, flags: { level?: number }) =>
  core.summaries.list(caller, { space_id: spaceId, ...(flags.level !== undefined ? { level: flags.level } : {}) });

export const summariesShow = ({ core, caller }: Session, spaceId: string, summaryId: string) =>
  core.summaries.read(caller, { space_id: spaceId, summary_id: summaryId });

export const summariesStatus = ({ core, caller }: Session, spaceId: string, jobId: string | undefined) =>
  core.summaries.status(caller, { space_id: spaceId, ...(jobId !== undefined ? { job_id: jobId } : {}) });
