import { hostname } from 'node:os';
import { isLiveMemError, LiveMemError } from '../../../shared/errors.js';
import { acquireLease, type Lease } from '../../../storage/lease.js';
import type { Caller } from '../../caller.js';
import type { CoreContext } from '../../context.js';
import { spaceKeys } from '../../layout.js';
import type { RunSettings, SummariesProgress, SummariesResult } from './run-types.js';

/**
 * A pass of the summaries runner on one space: the lease it holds across processes (taken at once
 * or `conflict`, renewed until released), and, within this process, what it does and the callers
 * that follow it to its end instead of answering `conflict` (summaries-service.ts `update`).
 */

/** What a pass does, as far as its result goes: two updates that agree on it would write the same summaries. */
export const doesOf = (settings: RunSettings): string => JSON.stringify([settings.strategy, settings.params, settings.maxLevel]);

/** A pass under way in this process: what it does, and a way for other callers to follow it to its end. */
export interface Pass {
  does: string;
  followers: Set<(event: SummariesProgress) => void>;
  /** Resolves with the pass's result (undefined when it threw) once its lease is released. */
  follow(onProgress?: (event: SummariesProgress) => void): Promise<SummariesResult | undefined>;
  finish(result: SummariesResult | undefined): void;
}

export function newPass(settings: RunSettings): Pass {
  let finish: (result: SummariesResult | undefined) => void = () => undefined;
  const done = new Promise<SummariesResult | undefined>((resolve) => {
    finish = resolve;
  });
  const followers = new Set<(event: SummariesProgress) => void>();
  return {
    does: doesOf(settings),
    followers,
    async follow(onProgress) {
      if (onProgress) followers.add(onProgress);
      try {
        return await done;
      } finally {
        if (onProgress) followers.delete(onProgress);
      }
    },
    finish: (result) => finish(result),
  };
}

/** Takes the space's summaries lease (`conflict` at once if held) and keeps it renewed until released. */
export async function lockSummaries(context: CoreContext, spaceId: string, caller: Caller) {
  const ttlMs = context.consolidation.leaseTtlMs;
  let lease: Lease;
  try {
    lease = await acquireLease(context.storage, spaceKeys(spaceId).summariesLock, {
      owner: `summaries:${caller.agent}@${hostname()}:${process.pid}`,
      ttlMs,
      clock: context.clock,
    });
  } catch (error) {
    if (!isLiveMemError(error, 'conflict')) throw error;
    throw new LiveMemError('conflict', `the summaries of space '${spaceId}' are already being updated`, { ...error.data, space_id: spaceId });
  }
  let lost: unknown;
  const timer = setInterval(() => lease.renew().catch((error: unknown) => (lost = error)), Math.max(1_000, ttlMs / 3));
  timer.unref();
  return {
    checkLease: () => {
      if (lost) throw lost;
    },
    release: async () => {
      clearInterval(timer);
      await lease.release().catch((error: unknown) => context.logger.warn('could not release the summaries lease', { error: String(error) }));
    },
  };
}
