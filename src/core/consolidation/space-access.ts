import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { lockSpace, PERSON_LEASE_WAIT_MS, type SpaceLock } from '../commit/space-lock.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';

/**
 * What the consolidation paths need of the space before they touch it: the same opening checks for
 * a model's run and an agent's ask and submit, and for the agent's two halves the same lease and the
 * same rules file — in one place so that they cannot drift apart on who may consolidate or how they
 * take turns.
 */

/** The space `rawSpaceId` names, once the caller may write it and it exists. */
export async function openSpace(context: CoreContext, caller: Caller, rawSpaceId: string): Promise<string> {
  const spaceId = validateSpaceId(rawSpaceId);
  authorize(caller, 'write', spaceId);
  await requireSpace(context, spaceId);
  return spaceId;
}

/** The space's lease, for a moment: claims are made and plans committed one at a time per space. */
export function lockForAgent(context: CoreContext, caller: Caller, spaceId: string): Promise<SpaceLock> {
  return lockSpace(context, spaceId, caller, 'agent-consolidation', {
    waitMs: PERSON_LEASE_WAIT_MS,
    waitFor: (holder) => holder === 'agent-consolidation' || holder === 'compaction',
  });
}

/** The space's bank rules, empty when it has none. */
export async function rulesOf(context: CoreContext, spaceId: string): Promise<string> {
  return (await context.storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';
}
