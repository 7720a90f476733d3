import type { ConsolidationHooks } from './consolidation-service.js';
import type { TextIndexEngine } from '../../search/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { lockSpace, PERSON_LEASE_WAIT_MS, type SpaceLock } from '../commit/space-lock.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';

/**
 * What both halves of agent-written consolidation (agent-ask.ts, agent-submit.ts) need of the space:
 * the same opening checks, the same lease and the same rules file, in one place so that asking for a
 * package and submitting its plan cannot drift apart on who may do either or how they take turns.
 */

/** What ask and submit are given: the core's context, the commit hooks and the search engine the window is drafted with. */
export interface AgentDeps {
  context: CoreContext;
  hooks: ConsolidationHooks;
  engine: TextIndexEngine;
}

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
