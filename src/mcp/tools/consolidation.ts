import { z } from 'zod';
import { outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const metrics = {
  space_id: z.string(),
  notes_processed: z.number().int(),
  notes_remaining: z.number().int().describe('live notes still waiting (over the per-run maximum, or after a failure)'),
  bank_files_created: z.number().int(),
  bank_files_updated: z.number().int(),
  bank_files_unchanged: z.number().int(),
  operations_applied: z.number().int(),
  operations_failed: z.number().int(),
  synthesis_size: z.number().int(),
  synthesis_compressed: z.boolean(),
  llm_prompt_tokens: z.number().int(),
  llm_completion_tokens: z.number().int(),
  llm_tokens_used: z.number().int(),
  llm_calls: z.number().int(),
  duration_seconds: z.number(),
  windows: z.number().int().describe('LLM windows the backlog was cut into, each committed on its own'),
  consolidations: z.array(z.string()).describe('ids of the consolidations committed (see history/)'),
  recovered: z.string().describe('a consolidation left unfinished by an earlier run, completed first'),
  warnings: z.array(z.string()),
  job_id: z.string().describe('background mode: the job to follow with bank_consolidation_status'),
  state: z.string(),
  started_at: z.string(),
};

const job = z.looseObject({
  job_id: z.string(),
  space_id: z.string(),
  state: z.enum(['running', 'ok', 'partial', 'error', 'interrupted']),
  started_at: z.string(),
  updated_at: z.string(),
  runner: z.string(),
  progress: z.looseObject({}).nullable(),
  result: z.looseObject({}).nullable(),
});

export const consolidationTools = [
  defineTool({
    name: 'bank_consolidate',
    title: 'Consolidate live notes into the memory bank',
    permission: 'write',
    description:
      "Fold the space's live notes into its memory bank with an LLM, following the space's rules, and update the cumulative synthesis. " +
      'Consolidated notes leave live/ for the space history. Safe to call any time: one consolidation per space runs at once (a second call gets conflict), ' +
      'a failure changes nothing (status error) or keeps the windows already done (status partial), and a crash is finished by the next call. ' +
      'Long backlogs can take minutes: pass background=true to get a job_id at once and poll bank_consolidation_status.',
    input: {
      space_id: spaceId,
      agent: z.string().default('').describe("Only this agent's notes (exact name); empty = every note"),
      background: z.boolean().default(false).describe('Return a job_id at once and consolidate in the background'),
    },
    output: outputShape(metrics),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
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
    description:
      'The state of a background consolidation (running, ok, partial, error, interrupted) with its progress and result; without job_id, the newest jobs of the space.',
    input: { space_id: spaceId, job_id: z.string().default('').describe('A job id from bank_consolidate(background=true); empty = the newest jobs') },
    output: outputShape({ space_id: z.string(), jobs: z.array(job) }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.jobs.status(caller, { space_id: args.space_id, ...(args.job_id ? { job_id: args.job_id } : {}) }),
  }),
];
