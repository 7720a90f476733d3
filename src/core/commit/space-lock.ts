import { hostname } from 'node:os';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { acquireLease, type Lease } from '../../storage/lease.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { applyCommit } from './commit.js';
import type { CommitRecord } from './record.js';
import { quarantinePending, readPending } from './pending.js';

/**
 * How long a person's correction or forget waits for the space's lease (a backup, or a consolidation
 * finishing) before `conflict`: people retry by hand, so a short wait spares them most refusals.
 */
export const PERSON_LEASE_WAIT_MS = 10_000;

export interface SpaceLock {
  /** Throws `conflict` if the lease was lost (expired and taken): a holder must check before committing. */
  stillHeld(): Promise<void>;
  release(): Promise<void>;
  /** The id of a commit left pending by a crashed run, finished when the lock was taken. */
  recovered: string | undefined;
  /** What the holder's result should say: a pending record refused and quarantined when the lock was taken. */
  warnings: string[];
}

/**
 * Takes the space's lease — one consolidation, compaction or backup per space at a time, across processes and
 * machines — and keeps it renewed until released. A commit left pending by a crashed holder is
 * finished first, so the holder always starts from a consistent space; a pending record that does
 * not check out (see pending.ts) is quarantined instead, with a warning. If the lease is held, waits
 * up to `waitMs` (default: not at all) — only while `waitFor` accepts the holder's purpose, when
 * given — then `conflict`.
 */
export async function lockSpace(
  context: CoreContext,
  spaceId: string,
  caller: Caller,
  purpose: string,
  options: { waitMs?: number; waitFor?: (holder: string) => boolean } = {},
): Promise<SpaceLock> {
  const ttlMs = context.consolidation.leaseTtlMs;
  const deadline = context.monotonic() + (options.waitMs ?? 0);
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
      const what = String(error.data.holder ?? 'consolidation').split(':')[0] as string;
      if (context.monotonic() >= deadline || (options.waitFor && !options.waitFor(what))) {
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
  const warnings: string[] = [];
  try {
    const pending = await readPending(context, spaceId);
    if (pending.state === 'invalid') {
      const key = await quarantinePending(context, spaceId, pending);
      const warning = `the pending consolidation record of '${spaceId}'${pending.id ? ` (${pending.id})` : ''} was refused (${pending.problem}) and moved to ${key}: it will not be applied, and its notes are still in live/`;
      warnings.push(warning);
      context.logger.warn(warning);
    } else if (pending.state === 'valid') {
      await finishPending(context, spaceId, pending.record);
      recovered = pending.record.id;
      context.logger.warn(`finished ${pending.record.kind ?? 'consolidation'} ${pending.record.id} of space '${spaceId}', left pending by an earlier run`);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return {
    recovered,
    warnings,
    async stillHeld() {
      if (lost) throw lost;
      await lease.renew();
    },
    release,
  };
}

/** Rolls a pending record forward; a failure (a store down, a full disk) leaves it pending, and says so. */
async function finishPending(context: CoreContext, spaceId: string, record: CommitRecord): Promise<void> {
  try {
    await applyCommit(context, record);
  } catch (error) {
    if (!(error instanceof LiveMemError)) throw error;
    throw new LiveMemError(
      error.code,
      `could not finish consolidation ${record.id} of '${spaceId}', committed by an earlier run: ${error.message}; it stays pending and is finished by the next consolidation, backup or export of '${spaceId}', or \`live-mem doctor ${spaceId} --fix\``,
      { ...error.data, space_id: spaceId, consolidation_id: record.id },
      { cause: error },
    );
  }
}
