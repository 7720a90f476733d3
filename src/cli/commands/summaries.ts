import type { SummariesProgress } from '../../core/recall/summaries/runner.js';
import type { Session } from '../open.js';

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
  quiet?: boolean;
}

/** A progress line on stderr (stdout keeps the result, for --json and pipes). */
function showProgress(event: SummariesProgress): void {
  process.stderr.write(`[summaries${event.level > 0 ? ` L${event.level}` : ''}] ${event.message}\n`);
}

export const summariesUpdate = ({ core, caller }: Session, spaceId: string, flags: SummariesUpdateFlags) => {
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
    flags.quiet ? {} : { onProgress: showProgress },
  );
};

export const summariesList = ({ core, caller }: Session, spaceId: string, flags: { level?: number }) =>
  core.summaries.list(caller, { space_id: spaceId, ...(flags.level !== undefined ? { level: flags.level } : {}) });

export const summariesShow = ({ core, caller }: Session, spaceId: string, summaryId: string) =>
  core.summaries.read(caller, { space_id: spaceId, summary_id: summaryId });

export const summariesStatus = ({ core, caller }: Session, spaceId: string, jobId: string | undefined) =>
  core.summaries.status(caller, { space_id: spaceId, ...(jobId !== undefined ? { job_id: jobId } : {}) });
