import type { SummariesProgress } from '../../core/recall/summaries/run-types.js';
import { type CommandDef, integer } from '../command.js';
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

export const summariesCommands: CommandDef = {
  name: 'summaries',
  description: 'hierarchical summaries of a space: level 1 over notes, higher levels over summaries',
  commands: [
    {
      name: 'update <space_id>',
      description: 'bring the summaries up to date with the configured LLM (progress on a terminal)',
      options: [
        { flags: '--full', description: 'recompute every level from scratch (reusing summaries that did not change)' },
        { flags: '--level <n>', description: 'highest level to build (1-6)', parse: integer },
        { flags: '--window-chars <n>', description: 'note characters per level-1 window (default 6000)', parse: integer },
        { flags: '--min-flush-chars <n>', description: 'smallest last window summarised (default half a window)', parse: integer },
        { flags: '--group-chars <n>', description: 'summary characters per group (default 10000)', parse: integer },
        { flags: '--wiggle <x>', description: 'size tolerance, 0-0.5 (default 0.2)', parse: Number },
        { flags: '--flush-after-ms <n>', description: 'seal the last window once its newest note is this old (default 1200000)', parse: integer },
        { flags: '--concurrency <n>', description: 'LLM calls at once (default 3)', parse: integer },
        { flags: '--batch-delay-ms <n>', description: 'pause between batches of calls (default 1500)', parse: integer },
        { flags: '--dry-run', description: 'say what would be done; no LLM call, no write' },
      ],
      run: summariesUpdate,
      examples: ['live-mem summaries update my-project --dry-run'],
    },
    {
      name: 'list <space_id>',
      description: 'summaries, newest first per level',
      options: [{ flags: '--level <n>', description: 'only this level', parse: integer }],
      run: summariesList,
      view: 'summaries',
    },
    { name: 'show <space_id> <summary_id>', description: 'one summary and what it covers', run: summariesShow, view: 'summary' },
    { name: 'status <space_id> [job_id]', description: 'background summaries runs, newest first', run: summariesStatus },
  ],
};
