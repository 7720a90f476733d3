import { lockSpace } from '../commit/space-lock.js';
import { spaceKeys } from '../layout.js';
import type { Finding, SpaceCheckDeps } from './doctor-space.js';

const CHECK = 'consolidation-claim';

/** A claim as doctor sees it: consolidation's claim.ts gives it through core.ts (the doctor reaches into no service). */
export interface ClaimView {
  claimer: string;
  expires_at: string;
  notes: number;
  state: 'held' | 'expired' | 'implausible' | 'unreadable';
  etag: string;
}

export interface Claims {
  inspect(spaceId: string): Promise<ClaimView | null>;
  /** Removes the claim if it is still the version `etag`. */
  remove(spaceId: string, etag: string): Promise<void>;
}

/**
 * An agent's claim on a window of notes (consolidation/claim.ts), as doctor reports it: held (who,
 * until when, how many notes), expired or unreadable (the next ask takes it over: nothing to do), or
 * implausible — held far longer than any ask gives, planted by hand or under a wrong clock — which
 * asks take over too, and `--fix` removes under the space's lease.
 */
export async function checkClaim(deps: SpaceCheckDeps, claims: Claims | undefined, spaceId: string): Promise<Finding[]> {
  const { context, fix } = deps;
  const claim = await claims?.inspect(spaceId);
  if (!claims || !claim) return [];
  const base = { check: CHECK, space_id: spaceId, fixable: false };
  switch (claim.state) {
    case 'unreadable':
      return [
        {
          ...base,
          status: 'warn',
          message: `the agent claim of '${spaceId}' (${spaceKeys(spaceId).claim}) is unreadable`,
          hint: 'nothing to do: the next agent that asks for a work package takes it over',
        },
      ];
    case 'expired':
      return [
        {
          ...base,
          status: 'ok',
          message: `'${spaceId}': ${claim.claimer}'s claim on ${claim.notes} notes expired at ${claim.expires_at}; the next ask takes it over (the notes are live)`,
        },
      ];
    case 'held':
      return [
        {
          ...base,
          status: 'ok',
          message: `'${spaceId}': ${claim.claimer} writes the plan of ${claim.notes} notes until ${claim.expires_at} (an agent-written consolidation)`,
        },
      ];
    case 'implausible':
      break;
  }
  const finding: Finding = {
    ...base,
    status: 'error',
    fixable: true,
    fix: 'removes it',
    message: `the agent claim of '${spaceId}' by ${claim.claimer} claims to be held until ${claim.expires_at}, far longer than any ask gives one: it was planted or written under a wrong clock`,
    hint: `asks take it over, but \`live-mem doctor ${spaceId} --fix\` removes it now`,
  };
  if (!fix) return [finding];
  // Under the space's lease, as an ask writes a claim.
  try {
    const held = await lockSpace(context, spaceId, deps.caller, 'doctor');
    try {
      await claims.remove(spaceId, claim.etag);
    } finally {
      await held.release();
    }
    return [{ ...finding, status: 'ok', fixed: true, message: `removed the agent claim of '${spaceId}' that claimed to be held until ${claim.expires_at}` }];
  } catch (error) {
    return [{ ...finding, message: `${finding.message}; could not remove it: ${error instanceof Error ? error.message : String(error)}` }];
  }
}
