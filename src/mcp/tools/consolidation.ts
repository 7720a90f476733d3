import { z } from 'zod';
import { int, outputShape, spaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const metrics = {
  notes_processed: int,
  notes_remaining: int.describe('live notes still waiting'),
  warnings: z.array(str),
  job_id: str.describe('background: follow it with bank_consolidation_status'),
};

const job = z.looseObject({ job_id: str, state: z.enum(['running', 'ok', 'partial', 'error', 'interrupted']) });

export const consolidationTools = [
  defineTool({
    name: 'bank_consolidate',
    title: 'Consolidate notes into the bank',
    permission: 'write',
    description:
      "Fold a space's live notes into its memory bank with an LLM and update the synthesis, when notes pile up or a task ends. " +
      'One run per space at a time; a failure changes nothing. Long backlogs: background=true.',
    input: {
      space_id: spaceId,
      agent: z.string().default('').describe("only this agent's notes; empty = all"),
      background: z.boolean().default(false).describe('return a job_id at once'),
    },
    output: outputShape(metrics),
    annotations: { readOnlyHint: false, destructiveHint: false },
    handler: (args, { core, caller, clientModel, reportProgress }) => {
      const llm = clientModel();
      const input = { space_id: args.space_id, ...(args.agent ? { agent: args.agent } : {}) };
      // A background job outlives this request: its progress goes to the job record, not to notifications.
      return args.background
        ? core.jobs.start(caller, input, llm ? { llm } : {})
        : core.consolidation.consolidate(caller, input, { ...(llm ? { llm } : {}), onProgress: reportProgress });
    },
  }),
  defineTool({
    name: 'bank_consolidation_status',
    title: 'Follow background consolidations',
    permission: 'read',
    description: 'Follow a background consolidation: its state, progress and result; without job_id, the newest jobs of the space.',
    input: { space_id: spaceId, job_id: z.string().default('').describe('empty = the newest jobs') },
    output: outputShape({ jobs: z.array(job) }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.jobs.status(caller, { space_id: args.space_id, ...(args.job_id ? { job_id: args.job_id } : {}) }),
  }),
];
