import { listKeys } from '../../storage/list.js';
import { isIndexFile, spaceKeys } from '../layout.js';
import { receipt } from './receipt.js';
import { bankReview, textHits } from './review.js';
import { sideRecords, summariesCovering } from './roll-forward.js';
import { consolidationsOf, locateNotes } from './select.js';
import type { ForgetDeps, ForgetInput } from './types.js';

/**
 * A forget without `confirm`: the receipt of what it would remove, read without the lease, nothing
 * changed — the same receipt a confirmed forget answers (receipt.ts), from what is there now.
 */

/** The receipt of what forgetting `names` would remove; nothing is changed. */
export async function dryRun(deps: ForgetDeps, spaceId: string, names: readonly string[], input: ForgetInput, reason: string | null) {
  const { context, corpus } = deps;
  const located = await locateNotes(corpus, spaceId, names);
  const summaries = await summariesCovering(context, spaceId, new Set(names));
  const snapshots = (await listKeys(context.storage, spaceKeys(spaceId).index)).filter(isIndexFile);
  const live = (await corpus.liveNames(spaceId)).map((name) => name.filename).filter((name) => names.includes(name));
  const sides = await sideRecords(context, spaceId, new Set(names), consolidationsOf(located));
  return {
    status: 'ok' as const,
    space_id: spaceId,
    dry_run: true as const,
    message: `nothing was changed: this is what forgetting ${names.length} note(s) would remove; pass confirm=true (CLI: --yes) to forget them`,
    reason,
    ...(await receipt(
      context,
      spaceId,
      located,
      { summaries, snapshots, live, ...sides },
      input.purge_backups === true,
      await bankReview(deps, spaceId, located),
      await textHits(deps, spaceId, located),
    )),
  };
}
