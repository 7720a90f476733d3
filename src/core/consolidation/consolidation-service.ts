import type { TextIndexEngine } from '../../search/types.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { lockSpace } from '../commit/space-lock.js';
import { requireModel } from '../model.js';
import type { ConsolidateInput, ConsolidateOptions, ConsolidationDeps, ConsolidationHooks, ProgressEvent } from './types.js';
import { runWindows } from './model-run.js';
import type { ConsolidationResult } from './result.js';
import { openSpace } from './space-access.js';

/**
 * Consolidation by a model — the one configured, or the client's through MCP sampling: checks the
 * call, takes the space's lease and runs the windows (model-run.ts). `begin` is apart from
 * `consolidate` so that a background job (jobs.ts) can hold the lease before it answers.
 */

export type { CommittedChanges, ConsolidateInput, ConsolidateOptions, ConsolidationHooks, ProgressEvent } from './types.js';

/** How long a consolidation waits for a compaction holding the space's lease (one model call per file). */
const COMPACTION_WAIT_MS = 60_000;

/** `engine` ranks a large bank file's sections against a window's notes (bank-view.ts). */
export function createConsolidationService(context: CoreContext, hooks: ConsolidationHooks, engine: TextIndexEngine) {
  const deps: ConsolidationDeps = { context, hooks, engine };

  /**
   * Checks the call and takes the space's lease: `conflict` at once if another consolidation holds
   * it. The caller runs the windows with `run` and releases the lease.
   */
  const begin = async (caller: Caller, input: ConsolidateInput, options: ConsolidateOptions) => {
    const spaceId = await openSpace(context, caller, input.space_id);
    const llm = requireModel(context, options.llm, 'consolidation');
    // A compaction started in the background by the previous consolidation is waited for; another consolidation is not.
    const held = await lockSpace(context, spaceId, caller, 'consolidation', { waitMs: COMPACTION_WAIT_MS, waitFor: (holder) => holder === 'compaction' });
    return {
      spaceId,
      run: (onProgress?: (event: ProgressEvent) => void) =>
        runWindows(deps, caller, { ...input, space_id: spaceId }, llm, { ...options, ...(onProgress ? { onProgress } : {}) }, held),
      release: held.release,
    };
  };

  return {
    begin,

    /** Consolidates now; resolves when done. */
    async consolidate(caller: Caller, input: ConsolidateInput, options: ConsolidateOptions = {}): Promise<ConsolidationResult> {
      const started = await begin(caller, input, options);
      try {
        return await started.run(options.onProgress);
      } finally {
        await started.release();
      }
    },
  };
}

export type ConsolidationService = ReturnType<typeof createConsolidationService>;
