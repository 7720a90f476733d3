import { isLiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { CompactionService } from './compaction-service.js';

/**
 * LIVE_MEM_COMPACTION=auto: after a consolidation that committed, the files it wrote that are now
 * over their budget are compacted in the background, with the configured model. It waits for the
 * consolidation to release the space's lease; a failure is logged and leaves the bank as it was
 * (a refused compaction changes nothing), and the next consolidation tries again.
 */
export function createAutoCompaction(context: CoreContext, service: CompactionService) {
  const running = new Set<Promise<unknown>>();

  return {
    after(spaceId: string, filenames: readonly string[]): void {
      if (!context.compaction.auto || !context.llm || filenames.length === 0) return;
      const caller: Caller = { agent: 'live-mem-compaction', permissions: new Set(['write']), spaces: new Set([spaceId]), canChooseAgent: false };
      const work = (async () => {
        if ((await service.overBudget(spaceId, filenames)).length === 0) return;
        const result = await service.compact(caller, { space_id: spaceId }, { waitMs: context.consolidation.leaseTtlMs });
        if (result.status === 'ok') context.logger.info(`compacted '${spaceId}' after its consolidation`, { files: result.files.length });
        else context.logger.warn(`the compaction of '${spaceId}' after its consolidation did not complete: ${result.message ?? result.status}`);
      })().catch((error: unknown) => {
        if (!isLiveMemError(error, 'conflict')) context.logger.warn(`could not compact '${spaceId}' after its consolidation`, { error: String(error) });
      });
      running.add(work);
      void work.finally(() => running.delete(work));
    },

    /** Resolves when this process's background compactions are done (before the process exits). */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
