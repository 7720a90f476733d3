import { z } from 'zod';
import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import type { SummariesProgress } from '../../core/recall/summaries/run-types.js';
import { int, obj, outputShape, spaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const updateResult = {
  written: int,
  unchanged: int,
  failed: int,
  pending_notes: int.describe('newest notes waiting for more before a summary'),
  job_id: str.describe('background: follow it with summaries_list (last_job)'),
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
      'Build or refresh the hierarchical summaries of a space with an LLM: level 1 over windows of notes, higher levels over groups of summaries. ' +
      'Incremental and resumable, one run per space at a time; the defaults suit most spaces.',
    input: {
      space_id: spaceId,
      strategy: z.enum(['incremental', 'full']).default('incremental').describe('full: recompute everything'),
      level: optionalInt('highest level, 1-6'),
      window_chars: optionalInt('note chars per level-1 window (6000)'),
      min_flush_chars: optionalInt('smallest last window (3000)'),
      group_chars: optionalInt('summary chars per group (10000)'),
      wiggle: z.number().optional().describe('size tolerance 0-0.5 (0.2)'),
      flush_after_ms: optionalInt('seal the last window after this quiet time (1200000)'),
      concurrency: optionalInt('LLM calls at once, 1-16 (3)'),
      batch_delay_ms: optionalInt('pause between batches (1500)'),
      dry_run: z.boolean().default(false).describe('only report the plan'),
      background: z.boolean().default(false).describe('return a job_id at once'),
    },
    output: outputShape(updateResult),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    handler: (args, { core, caller, clientModel, reportProgress, asTask }) => {
      const { background, ...input } = args;
      const llm = clientModel({ background });
      return background || (asTask === true && !llm && !input.dry_run)
        ? core.summaries.start(caller, input, llm ? { llm } : {})
        : core.summaries.update(caller, input, { ...(llm ? { llm } : {}), onProgress: levelProgress(reportProgress) });
    },
    task: { jobs: (core) => core.summaries },
  }),
  defineTool({
    name: 'summaries_list',
    title: 'List summaries',
    permission: 'read',
    description: 'List the summaries of a space, newest first per level, with previews; last_job is the newest background run.',
    input: { space_id: spaceId, level: optionalInt('only this level') },
    output: outputShape({ summaries: z.array(z.looseObject({ id: str, level: int, preview: str })), total: int, last_job: obj }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.summaries.list(caller, { space_id: args.space_id, ...(args.level !== undefined ? { level: args.level } : {}) }),
  }),
  defineTool({
    name: 'summaries_read',
    title: 'Read one summary',
    permission: 'read',
    description: 'Read one summary whole, with the notes (level 1) or the summaries it covers and their times.',
    input: { space_id: spaceId, summary_id: z.string().describe('see summaries_list') },
    output: outputShape({ summary: obj, notes: z.array(obj), children: z.array(obj) }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.summaries.read(caller, args),
  }),
];
