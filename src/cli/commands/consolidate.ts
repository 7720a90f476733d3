import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import type { CommandDef } from '../command.js';
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

export const consolidateCommand: CommandDef = {
  name: 'consolidate <space_id>',
  description: 'fold the live notes into the memory bank with the configured LLM (progress on a terminal)',
  // Not --agent: that is the global option (the name notes are signed with), which took the word
  // before this command's filter ever saw it.
  options: [{ flags: '--only-agent <name>', description: "only this agent's notes (exact name)" }],
  run: consolidate,
  view: 'consolidation',
  examples: ['live-mem consolidate my-project', 'live-mem consolidate my-project --only-agent claude'],
};

export const consolidateStatusCommand: CommandDef = {
  name: 'consolidate-status <space_id> [job_id]',
  description: 'state of background consolidations (started by MCP clients), newest first',
  run: consolidationStatus,
};
