import type { ProgressEvent } from '../../core/consolidation/consolidation-service.js';
import { readFile } from 'node:fs/promises';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { type CommandDef, integer } from '../command.js';
import { readStdin } from '../stdin.js';
import { hereCheckout } from '../here.js';
import type { Session } from '../open.js';
import { percent } from '../progress.js';

export interface ConsolidateOptions {
  onlyAgent?: string;
  prepare?: boolean;
  tokens?: number;
  plan?: string;
  handle?: string;
}

/**
 * Consolidates with the configured model; or, with --prepare, prints a work package whose plan a
 * person's model writes (any model, through any window), and with --plan submits that plan
 * (core/consolidation/agent-plan.ts): the same checks, the same commit.
 */
export const consolidate = async ({ core, caller, progress }: Session, spaceId: string, options: ConsolidateOptions) => {
  const only = options.onlyAgent;
  if (options.prepare && options.plan !== undefined) throw invalid('--prepare and --plan are two steps: run one, then the other');
  // The bank's statements whose code moved on in this folder's checkout are shown to whoever writes the plan, to repair.
  const checkout = await hereCheckout();
  const inCheckout = checkout ? { checkout } : {};
  if (options.prepare)
    return core.consolidation.ask(
      caller,
      {
        space_id: spaceId,
        ...(only !== undefined ? { agent: only } : {}),
        ...(options.tokens ? { budget_tokens: options.tokens } : {}),
      },
      inCheckout,
    );
  if (options.plan !== undefined) {
    if (!options.handle) throw invalid('--plan needs --handle: the handle `live-mem consolidate --prepare` printed');
    const text = options.plan === '-' ? await readStdin('the plan (JSON)') : await readFile(options.plan, 'utf8');
    return core.consolidation.submit(caller, { space_id: spaceId, handle: options.handle }, text);
  }
  try {
    return await core.consolidation.consolidate(
      caller,
      { space_id: spaceId, ...(only !== undefined ? { agent: only } : {}) },
      {
        onProgress: (event: ProgressEvent) =>
          progress.update(`consolidate ${spaceId} ${percent(event.notes_done, event.notes_total) || '…'} · ${event.message}`),
        ...inCheckout,
      },
    );
  } catch (error) {
    // No model here: a person's own (a local model, a chat window) can still write the plan.
    if (!isLiveMemError(error, 'config_error') || core.context.llm) throw error;
    throw new LiveMemError(
      'config_error',
      `${error.message} Or let any model write the plan: \`live-mem consolidate ${spaceId} --prepare\` prints a work package, ` +
        '`--plan FILE --handle H` submits its plan (docs/consolidation.md).',
      error.data,
      { cause: error },
    );
  }
};

export const consolidationStatus = ({ core, caller }: Session, spaceId: string, jobId: string | undefined) =>
  core.jobs.status(caller, { space_id: spaceId, ...(jobId !== undefined ? { job_id: jobId } : {}) });

export const consolidateCommand: CommandDef = {
  name: 'consolidate <space_id>',
  description: 'fold the live notes into the memory bank with the configured LLM (progress on a terminal), or with a plan any model writes (--prepare, --plan)',
  // Not --agent: that is the global option (the name notes are signed with), which took the word
  // before this command's filter ever saw it.
  options: [
    { flags: '--only-agent <name>', description: "only this agent's notes (exact name)" },
    { flags: '--prepare', description: 'print a work package (the prompt, the plan format, a handle) for any model to write the plan; no model is called' },
    { flags: '--tokens <n>', description: 'with --prepare: the package budget in tokens (default 12000)', parse: integer },
    { flags: '--plan <file>', description: "submit the plan written for a package ('-' = stdin); checked like a model's, then committed" },
    { flags: '--handle <handle>', description: 'with --plan: the handle --prepare printed' },
  ],
  run: consolidate,
  view: 'consolidation',
  examples: [
    'live-mem consolidate my-project',
    'live-mem consolidate my-project --only-agent claude',
    'live-mem consolidate my-project --prepare > package.md',
    'live-mem consolidate my-project --plan plan.json --handle my-project:…',
  ],
};

export const consolidateStatusCommand: CommandDef = {
  name: 'consolidate-status <space_id> [job_id]',
  description: 'state of background consolidations (started by MCP clients), newest first',
  run: consolidationStatus,
};
