import { z } from 'zod';
import { int, outputShape, projectSpaceId, spaceId, str } from '../schemas.js';
import { DEFAULT_PACKAGE_TOKENS } from '../../core/consolidation/agent-plan.js';
import { type ConsolidationResult, joinRuns } from '../../core/consolidation/result.js';
import { invalid } from '../../shared/errors.js';
import { defineTool, READ_ONLY } from '../tool.js';

const metrics = {
  notes_processed: int,
  notes_remaining: int.describe('live notes still waiting'),
  warnings: z.array(str),
  job_id: str.describe('background: see bank_consolidation_status'),
};

const job = z.looseObject({ job_id: str, state: z.enum(['running', 'ok', 'partial', 'error', 'interrupted']) });

export const consolidationTools = [
  defineTool({
    name: 'bank_consolidate',
    title: 'Consolidate notes into the bank',
    permission: 'write',
    description:
      'Fold live notes into the memory bank and synthesis when notes pile up or a task ends. ' +
      "No model (or handle='new'): get a work package; submit handle and your plan.",
    input: {
      space_id: projectSpaceId,
      agent: z.string().default('').describe("only this agent's notes"),
      background: z.boolean().default(false).describe('return a job_id at once'),
      handle: z.string().default('').describe("'new' or a package's"),
      plan: z.string().default('').describe('JSON'),
      tokens: z.number().int().default(DEFAULT_PACKAGE_TOKENS).describe('budget'),
    },
    output: outputShape(metrics),
    annotations: { readOnlyHint: false, destructiveHint: false },
    handler: async (args, { core, caller, clientModel, reportProgress, asTask, checkout }) => {
      const input = { space_id: args.space_id, ...(args.agent ? { agent: args.agent } : {}) };
      if (args.handle !== '' && args.handle !== 'new') {
        if (args.plan === '') throw invalid("give your plan (plan) with the handle, or handle='new' for a work package");
        return core.consolidation.submit(caller, { space_id: args.space_id, handle: args.handle }, args.plan);
      }
      const llm = clientModel({ background: args.background });
      // The bank's statements whose code moved on in this checkout are shown to whoever writes the plan, to repair.
      const here = await checkout?.();
      const inCheckout = here ? { checkout: here } : {};
      if (args.handle === 'new' || (!core.context.llm && !llm)) return core.consolidation.ask(caller, { ...input, budget_tokens: args.tokens }, inCheckout);
      // A background job outlives this request: its progress goes to the job record, not to notifications.
      // A client that takes tasks gets live-mem's own model's work as one (the client's model answers within the call).
      return args.background || (asTask === true && !llm)
        ? core.jobs.start(caller, input, llm ? { llm } : {})
        : core.consolidation.consolidate(caller, input, { ...(llm ? { llm } : {}), onProgress: reportProgress, ...inCheckout });
    },
    rounds: (earlier, later) => joinRuns(earlier as ConsolidationResult, later as ConsolidationResult),
    task: { jobs: (core) => core.jobs },
  }),
  defineTool({
    name: 'bank_compact',
    title: 'Compact bank files over budget',
    permission: 'write',
    description:
      'Rewrite the older sections of bank files over their size budget as digests (runs by itself after consolidations). ' +
      'Newest entries, dates and code are kept; a refused rewrite changes nothing; the old text stays in history and memory_search.',
    input: {
      space_id: spaceId,
      file: z.string().default('').describe('only this file; empty = every file over budget'),
      dry_run: z.boolean().default(false).describe('report, write nothing'),
    },
    output: outputShape({
      files: z.array(z.looseObject({ filename: str, tokens_before: int, tokens_after: int, budget_tokens: int, sections_digested: int })),
      compaction_id: str,
      dry_run: z.boolean(),
      llm_tokens_used: int,
    }),
    annotations: { readOnlyHint: false, destructiveHint: false },
    handler: (args, { core, caller, clientModel }) => {
      const llm = clientModel();
      return core.compaction.compact(caller, { space_id: args.space_id, ...(args.file ? { file: args.file } : {}), dry_run: args.dry_run }, llm ? { llm } : {});
    },
  }),
  defineTool({
    name: 'bank_consolidation_status',
    title: 'Follow background consolidations',
    permission: 'read',
    description: 'Follow a background consolidation: its state, progress and result; without job_id, the newest jobs of the space.',
    input: { space_id: projectSpaceId, job_id: z.string().default('').describe('empty = the newest jobs') },
    output: outputShape({ jobs: z.array(job) }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.jobs.status(caller, { space_id: args.space_id, ...(args.job_id ? { job_id: args.job_id } : {}) }),
  }),
];
