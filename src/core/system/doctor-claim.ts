import { implausible, expired, readClaim } from '../consolidation/claim.js';
import { lockSpace } from '../commit/space-lock.js';
import { spaceKeys } from '../layout.js';
import type { Finding, SpaceCheckDeps } from './doctor-space.js';

const CHECK = 'consolidation-claim';

/**
 * An agent's claim on a window of notes (consolidation/claim.ts), as doctor reports it: held (who,
 * until when, how many notes), expired or unreadable (the next ask takes it over: nothing to do), or
 * implausible — held far longer than any ask gives, planted by hand or under a wrong clock — which
 * asks take over too, and `--fix` removes.
 */
export async function checkClaim(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context, fix } = deps;
  const stored = await readClaim(context, spaceId);
  if (!stored) return [];
  const { claim } = stored;
  const now = context.clock();
  const ttlMs = context.consolidation.claimTtlMs;
  const base = { check: CHECK, space_id: spaceId, fixable: false };
  if (claim.handle === '')
    return [
      {
        ...base,
        status: 'warn',
        message: `the agent claim of '${spaceId}' (${spaceKeys(spaceId).claim}) is unreadable`,
        hint: 'nothing to do: the next agent that asks for a work package takes it over',
      },
    ];
  if (implausible(claim, now, ttlMs)) {
    const finding: Finding = {
      ...base,
      status: 'error',
      fixable: true,
      fix: 'removes it',
      message: `the agent claim of '${spaceId}' by ${claim.claimer} claims to be held until ${claim.expires_at}, far longer than any ask gives one: it was planted or written under a wrong clock`,
      hint: `asks take it over, but \`live-mem doctor ${spaceId} --fix\` removes it now`,
    };
    if (!fix) return [finding];
    // Under the space's lease, as an ask writes a claim: what is removed is the claim read again there.
    try {
      const held = await lockSpace(context, spaceId, deps.caller, 'doctor');
      try {
        const again = await readClaim(context, spaceId);
        if (again?.etag === stored.etag) await context.storage.delete(spaceKeys(spaceId).claim);
      } finally {
        await held.release();
      }
      return [{ ...finding, status: 'ok', fixed: true, message: `removed the agent claim of '${spaceId}' that claimed to be held until ${claim.expires_at}` }];
    } catch (error) {
      return [{ ...finding, message: `${finding.message}; could not remove it: ${error instanceof Error ? error.message : String(error)}` }];
    }
  }
  if (expired(claim, now, ttlMs))
    return [
      {
        ...base,
        status: 'ok',
        message: `'${spaceId}': ${claim.claimer}'s claim on ${claim.notes.length} notes expired at ${claim.expires_at}; the next ask takes it over (the notes are live)`,
      },
    ];
  return [
    {
      ...base,
      status: 'ok',
      message: `'${spaceId}': ${claim.claimer} writes the plan of ${claim.notes.length} notes until ${claim.expires_at} (an agent-written consolidation)`,
    },
  ];
}
