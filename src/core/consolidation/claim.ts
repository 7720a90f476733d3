import { randomBytes } from 'node:crypto';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import type { ElidedSection } from '../commit/apply-plan.js';

/**
 * An agent's claim on the window of notes it writes the plan of (agent-plan.ts): stored at
 * `_consolidation/claim.json`, so it outlives the call that made it and is seen by every process and
 * machine. It is made under the space's lease, with a create-only write (or, over an expired or
 * stale claim, a compare-and-swap on the version read): two agents asking at once never both hold
 * one. It expires by itself: an agent that goes away blocks nobody past `expires_at`. It records what
 * the plan was made from — the notes, the bank's and the synthesis's versions, what was shown in part,
 * the prompt's nonce — so that the plan is checked against exactly that.
 */
export interface Claim {
  /** `{space_id}:{random}`: the space is in it, so a handle given for another space is told apart. */
  handle: string;
  space_id: string;
  /** The agent that asked. */
  claimer: string;
  claimed_at: string;
  expires_at: string;
  /** The window's notes, oldest first; `keep`: characters shown of a note too large for the package. */
  notes: Array<{ filename: string; keep?: number }>;
  /** Each bank file's etag when the package was made. */
  bank: Record<string, string>;
  synthesis_etag: string | null;
  /** Files shown in part, with the sections not shown whole. */
  partial: Array<[string, ElidedSection[]]>;
  nonce: string;
}

export interface StoredClaim {
  claim: Claim;
  etag: string;
}

export const newHandle = (spaceId: string): string => `${spaceId}:${randomBytes(12).toString('hex')}`;

/** The space a handle was given for, or undefined when it is no handle. */
export function handleSpace(handle: string): string | undefined {
  const at = handle.lastIndexOf(':');
  return at > 0 && /^[0-9a-f]{24}$/.test(handle.slice(at + 1)) ? handle.slice(0, at) : undefined;
}

/** The space's claim; null when there is none (or it is unreadable: taken over like an expired one). */
export async function readClaim(context: CoreContext, spaceId: string): Promise<StoredClaim | null> {
  const object = await context.storage.get(spaceKeys(spaceId).claim);
  if (!object) return null;
  try {
    const claim = JSON.parse(object.body.toString('utf8')) as Claim;
    if (typeof claim.handle !== 'string' || typeof claim.expires_at !== 'string' || !Array.isArray(claim.notes)) throw new Error('not a claim');
    return { claim, etag: object.etag };
  } catch {
    return {
      claim: { handle: '', space_id: spaceId, claimer: '?', claimed_at: '', expires_at: '', notes: [], bank: {}, synthesis_etag: null, partial: [], nonce: '' },
      etag: object.etag,
    };
  }
}

/** How much longer than the claim's time to live a claim may claim to last before it is taken for planted (a hand, a wrong clock). */
const IMPLAUSIBLE_FACTOR = 2;

/** Whether `claim` claims to last far longer than any ask gives one (`ttlMs`): planted or written under a wrong clock. */
export const implausible = (claim: Claim, now: Date, ttlMs: number): boolean => Date.parse(claim.expires_at) - now.getTime() > IMPLAUSIBLE_FACTOR * ttlMs;

/**
 * Whether `claim` no longer holds its window: past its expiry, or implausible (a claim held until 2099
 * would block a space's agents for good): either is taken over by the next ask.
 */
export const expired = (claim: Claim, now: Date, ttlMs: number): boolean => !(Date.parse(claim.expires_at) > now.getTime()) || implausible(claim, now, ttlMs);

/**
 * Writes `claim`: create-only, or over `replacing` (the version of an expired or stale claim read under
 * the lease) only. A lost condition is `conflict`: another agent's claim got there first.
 */
export async function writeClaim(context: CoreContext, claim: Claim, replacing: string | undefined): Promise<string> {
  try {
    const { etag } = await context.storage.put(spaceKeys(claim.space_id).claim, JSON.stringify(claim), {
      ...(replacing ? { ifMatch: replacing } : { ifNoneMatch: '*' }),
      contentType: 'application/json',
    });
    return etag;
  } catch (error) {
    if (!isLiveMemError(error, 'precondition_failed')) throw error;
    throw new LiveMemError('conflict', `space '${claim.space_id}': another agent claimed the window first; ask again`, { space_id: claim.space_id });
  }
}

/** Removes the claim if it is still `handle`'s (idempotent). */
export async function dropClaim(context: CoreContext, spaceId: string, handle: string): Promise<void> {
  const stored = await readClaim(context, spaceId);
  if (stored?.claim.handle === handle) await context.storage.delete(spaceKeys(spaceId).claim);
}

/**
 * The claims of a space for the doctor, which sits beside the services and may not reach into
 * consolidation: core.ts hands it this view (a port), so the claim's format stays in this file.
 */
export function claimInspector(context: CoreContext) {
  return {
    async inspect(spaceId: string) {
      const stored = await readClaim(context, spaceId);
      if (!stored) return null;
      const { claim, etag } = stored;
      const now = context.clock();
      const ttlMs = context.consolidation.claimTtlMs;
      const state: 'held' | 'expired' | 'implausible' | 'unreadable' =
        claim.handle === '' ? 'unreadable' : implausible(claim, now, ttlMs) ? 'implausible' : expired(claim, now, ttlMs) ? 'expired' : 'held';
      return { claimer: claim.claimer, expires_at: claim.expires_at, notes: claim.notes.length, state, etag };
    },
    /** Removes the claim if it is still the version `etag` (the caller holds the space's lease). */
    async remove(spaceId: string, etag: string): Promise<void> {
      if ((await readClaim(context, spaceId))?.etag === etag) await context.storage.delete(spaceKeys(spaceId).claim);
    },
  };
}

export type ClaimInspector = ReturnType<typeof claimInspector>;
