import type { Caller } from '../caller.js';
import { commitAndApply } from '../commit/commit.js';
import { FORGET_ID_SUFFIX } from '../commit/history-record.js';
import { type CommitRecord, noteFreeRecord } from '../commit/record.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import { receipt } from './receipt.js';
import { type BankReview, bankReview, type TextHit, textHits } from './review.js';
import { applyForget } from './roll-forward.js';
import { locateNotes } from './select.js';
import type { ForgetDeps, ForgetInput, Located } from './types.js';

/**
 * A confirmed forget: under the space's lease, the notes located, what may still hold their words
 * read, and the forget committed through the one commit protocol (`kind: 'forget'`, commit-kind.ts)
 * and rolled forward (roll-forward.ts); then this process's index told, and the receipt answered.
 */

/** Forgets `names` for good and answers the receipt of what was removed. */
export async function forgetNow(deps: ForgetDeps, caller: Caller, spaceId: string, names: readonly string[], input: ForgetInput, reason: string | null) {
  const { context } = deps;
  const held = await lockSpace(context, spaceId, caller, 'forget', { waitMs: PERSON_LEASE_WAIT_MS });
  let record: CommitRecord;
  let located: Located[];
  let applied: Awaited<ReturnType<typeof applyForget>>;
  let review: BankReview;
  let hits: TextHit[];
  try {
    // Located under the lease: no consolidation moves a note between here and the commit.
    located = await locateNotes(deps.corpus, spaceId, names);
    review = await bankReview(deps, spaceId, located); // before the forget takes the notes out of the provenance
    hits = await textHits(deps, spaceId, located); // and their text away
    record = {
      ...noteFreeRecord(context, spaceId, 'forget', FORGET_ID_SUFFIX),
      metrics: { by: caller.agent, notes: located.length },
      forget: { by: caller.agent, reason, notes: located, ...(input.purge_backups === true ? { purge_backups: true } : {}) },
    };
    applied = await commitAndApply(context, held, record, () => applyForget(context, record));
  } finally {
    await held.release();
  }
  // This process's own index learns it now (others when they next read the space), and writes a clean snapshot.
  await deps.onForgotten?.(spaceId);
  context.logger.info(`forget ${record.id} of '${spaceId}' by ${caller.agent}: ${located.length} note(s)`);
  return {
    status: 'ok' as const,
    space_id: spaceId,
    dry_run: false as const,
    forget_id: record.id,
    message: `forgot ${located.length} note(s) of '${spaceId}': removed from every place listed; history_list shows the forget (never the text)`,
    reason,
    ...(await receipt(context, spaceId, located, applied, input.purge_backups === true, review, hits)),
  };
}
