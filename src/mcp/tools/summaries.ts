import { z } from 'zod';
import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import type { SummariesProgress } from '../../core/recall/summaries/runner.js';
import { outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const levelReport = z.looseObject({
  level: z.number().int(),
  summaries: z.number().int(),
  open: z.number().int(),
  created: z.number().int(),
  regenerated: z.number().int(),
  sealed: z.number().int(),
  unchanged: z.number().int(),
  deleted: z.number().int(),
  failed: z.number().int(),
});

const updateResult = {
  space_id: z.string(),
  strategy: z.string(),
  dry_run: z.boolean(),
  levels: z.array(levelReport),
  written: z.number().int(),
  unchanged: z.number().int(),
  deleted: z.number().int(),
  failed: z.number().int(),
  notes_total: z.number().int(),
  pending_notes: z.number().int().describe('newest notes waiting for more before a summary'),
  pending_chars: z.number().int(),
  llm_calls: z.number().int(),
  llm_prompt_tokens: z.number().int(),
  llm_completion_tokens: z.number().int(),
  llm_tokens_used: z.number().int(),
  duration_seconds: z.number(),
  failures: z.array(z.looseObject({ level: z.number().int(), id: z.string(), error: z.string() })),
  actions: z.array(z.looseObject({})).describe('dry_run: what each summary would undergo'),
  job_id: z.string().describe('background: the job, reported by summaries_list (last_job)'),
  state: z.string(),
  started_at: z.string(),
};

/** Progress over every level as one increasing count, as MCP wants it. */
function levelProgress(report: (event: ProgressEvent) => void) {
  let offset = 0;
  let level = 0;
  let total = 0;
  return (event: SummariesProgress) => {
    if (event.level !== level) {
      offset += total;
      level = event.level;
    }
    total = event.total;
    report({
      phase: event.phase === 'done' ? 'done' : 'llm',
      message: event.message,
      notes_done: offset + event.done,
      notes_total: offset + event.total,
      window: event.level,
    });
  };
}

const optionalInt = (description: string) => z.number().int().optional().describe(description);

export const summaryTools = [
  defineTool({
    name: 'summaries_update',
    title: 'Update hierarchical summaries',
    permission: 'write',
    description:
      'Summarise the space with an LLM: level 1 over windows of notes, higher levels over groups of summaries. Incremental and resumable; one run per space at once.',
    input: {
      space_id: spaceId,
      strategy: z.enum(['incremental', 'full']).default('incremental').describe('full: recompute every partition'),
      level: optionalInt('highest level to build, 1-6'),
      window_chars: optionalInt('note chars per L1 window (6000)'),
      min_flush_chars: optionalInt('smallest last window summarised (3000)'),
      group_chars: optionalInt('summary chars per group (10000)'),
      wiggle: z.number().optional().describe('size tolerance, 0-0.5 (0.2)'),
      flush_after_ms: optionalInt('seal the last window after this quiet time (1200000)'),
      concurrency: optionalInt('LLM calls at once, 1-16 (3)'),
      batch_delay_ms: optionalInt('pause between batches (1500)'),
      dry_run: z.boolean().default(false).describe('report the plan; no LLM call, no write'),
      background: z.boolean().default(false).describe('return a job_id at once'),
    },
    output: outputShape(updateResult),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: (args, { core, caller, clientModel, reportProgress }) => {
      const { background, ...input } = args;
      const llm = clientModel();
      return background
        ? core.summaries.start(caller, input, llm ? { llm } : {})
        : core.summaries.update(caller, input, { ...(llm ? { llm } : {}), onProgress: levelProgress(reportProgress) });
    },
  }),
  defineTool({
    name: 'summaries_list',
    title: 'List summaries',
    permission: 'read',
    description: 'Summaries of a space, newest first per level, with a preview; last_job tells the state of the newest background run.',
    input: { space_id: spaceId, level: optionalInt('only this level, 1-6') },
    output: outputShape({
      space_id: z.string(),
      summaries: z.array(
        z.looseObject({
          id: z.string(),
          level: z.number().int(),
          sealed: z.boolean(),
          range_start: z.string(),
          range_end: z.string(),
          covers: z.number().int(),
          chars: z.number().int(),
          preview: z.string(),
        }),
      ),
      total: z.number().int(),
      last_job: z.looseObject({ job_id: z.string(), state: z.string() }),
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.summaries.list(caller, { space_id: args.space_id, ...(args.level !== undefined ? { level: args.level } : {}) }),
  }),
  defineTool({
    name: 'summaries_read',
    title: 'Read one summary',
    permission: 'read',
    description: 'One summary whole, with the notes (level 1) or child summaries it covers and their times.',
    input: { space_id: spaceId, summary_id: z.string().describe('an id from summaries_list') },
    output: outputShape({ space_id: z.string(), summary: z.looseObject({}), notes: z.array(z.looseObject({})), children: z.array(z.looseObject({})) }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.summaries.read(caller, args),
  }),
];
