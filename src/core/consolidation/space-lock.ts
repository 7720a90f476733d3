import { hostname } from 'node:os';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { acquireLease, type Lease } from '../../storage/lease.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { applyCommit, readPendingCommit } from './commit.js';

export interface SpaceLock {
  /** Throws `conflict` if the lease was lost (expired and taken): a holder must check before committing. */
  stillHeld(): Promise<void>;
  release(): Promise<void>;
  /** The id of a commit left pending by a crashed run, finished when the lock was taken. */
  recovered: string | undefined;
}

/**
 * Takes the space's lease — one consolidation or backup per space at a time, across processes and
 * machines — and keeps it renewed until released. A commit left pending by a crashed holder is
 * finished first, so the holder always starts from a consistent space. If the lease is held, waits
 * up to `waitMs` (default: not at all), then `conflict`.
 */
export async function lockSpace(context: CoreContext, spaceId: string, caller: Caller, purpose: string, options: { waitMs?: number } = {}): Promise<SpaceLock> {
  const ttlMs = context.consolidation.leaseTtlMs;
  const deadline = Date.now() + (options.waitMs ?? 0);
  let lease: Lease | undefined;
  for (let attempt = 0; !lease; attempt++) {
    try {
      lease = await acquireLease(context.storage, spaceKeys(spaceId).lock, {
        owner: `${purpose}:${caller.agent}@${hostname()}:${process.pid}`,
        ttlMs,
        clock: context.clock,
      });
    } catch (error) {
      if (!isLiveMemError(error, 'conflict')) throw error;
      if (Date.now() >= deadline) {
        const what = String(error.data.holder ?? 'consolidation').split(':')[0];
        throw new LiveMemError('conflict', `space '${spaceId}' is busy: a ${what} is already running`, { ...error.data, space_id: spaceId });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
    }
  }
  let lost: unknown;
  const timer = setInterval(() => lease.renew().catch((error: unknown) => (lost = error)), Math.max(1_000, ttlMs / 3));
  timer.unref();
  const release = async () => {
    clearInterval(timer);
    await lease.release().catch((error: unknown) => context.logger.warn('could not release the space lease', { error: String(error) }));
  };
  let recovered: string | undefined;
  try {
    const pending = await readPendingCommit(context, spaceId);
    if (pending) {
      await applyCommit(context, pending);
      recovered = pending.id;
      context.logger.warn(`finished consolidation ${pending.id} of space '${spaceId}', left pending by an earlier run`);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return {
    recovered,
    async stillHeld() {
      if (lost) throw lost;
      await lease.renew();
    },
    release,
  };
}
