import { LiveMemError } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireModel } from '../model.js';
import { requireSpace } from '../space-meta.js';
import { validateBankFilename, validateSpaceId } from '../validate.js';
import { overBudget } from './over-budget.js';
import { runCompaction } from './run.js';
import type { CompactInput, CompactionHooks, CompactionResult, CompactOptions } from './types.js';

export type { CompactedFile, CompactInput, CompactionHooks, CompactionResult, CompactOptions } from './types.js';

/**
 * Compaction: a bank file over its budget has its older sections rewritten as digests by the model,
 * under guards checked before anything is written (guards.ts), and commits through consolidation's
 * one protocol (commit.ts) under the space's lease, keeping each rewritten section's pre-image in
 * history (run.ts). A file whose digests a guard refuses is left exactly as it was; the run says so
 * and is never `ok`.
 */
export function createCompactionService(context: CoreContext, hooks: CompactionHooks = {}) {
  const { storage } = context;

  return {
    /** Compacts the space's files over their budget (or the one named); `conflict` if its lease is held. */
    async compact(caller: Caller, input: CompactInput, options: CompactOptions = {}): Promise<CompactionResult> {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      const file = input.file === undefined || input.file === '' ? undefined : validateBankFilename(input.file);
      await requireSpace(context, spaceId);
      if (file !== undefined && !(await storage.stat(spaceKeys(spaceId).bankFile(file)))) {
        throw new LiveMemError('not_found', `bank file '${file}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename: file });
      }
      // A look without the lease (the run looks again under it): with nothing over budget and nothing a killed
      // run left, there is nothing to do, and no model is needed; a model is needed only for files over budget.
      const needed = await overBudget(context, spaceId, file !== undefined ? [file] : undefined);
      if (needed.length === 0 && !(await storage.stat(spaceKeys(spaceId).pending))) {
        const message = file !== undefined ? `${file} is within its budget: nothing to compact` : 'every bank file is within its budget: nothing to compact';
        return { status: 'ok', space_id: spaceId, files: [], dry_run: input.dry_run === true, llm_tokens_used: 0, message };
      }
      const llm = needed.length > 0 ? requireModel(context, options.llm, 'compaction') : (context.llm ?? options.llm);
      return runCompaction(
        context,
        hooks,
        caller,
        spaceId,
        { space_id: spaceId, ...(file !== undefined ? { file } : {}), dry_run: input.dry_run === true },
        llm,
        options,
      );
    },

    /** Which of `filenames` (default: every bank file) are over their budget now, the bank's own budget counted. */
    overBudget: (spaceId: string, filenames?: readonly string[]): Promise<string[]> => overBudget(context, spaceId, filenames),
  };
}

export type CompactionService = ReturnType<typeof createCompactionService>;
