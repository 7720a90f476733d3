import { randomUUID } from 'node:crypto';
import { isLiveMemError, LiveMemError } from '../shared/errors.js';
import { PROCESS_ID, processGone } from '../shared/process.js';
import type { StorageDriver } from './types.js';

/**
 * A lease lock stored as an object, built only on the driver contract (create-only and
 * compare-and-swap), so it holds across processes on fs and across machines on S3.
 * A holder that crashes blocks nobody past `expires_at`; a live holder renews before then. A holder
 * on this machine whose process is gone (killed, crashed) blocks nobody at all: its lease is taken
 * over at once.
 */
export interface LeaseRecord {
  owner: string;
  token: string;
  acquired_at: string;
  expires_at: string;
  /** The holding process, where it can be told apart: `{boot id}/{pid namespace}/{pid}` (Linux). */
  process?: string;
}

export interface Lease {
  readonly key: string;
  readonly record: LeaseRecord;
  /** Extends the lease; throws `conflict` if it was lost (expired and taken by another holder). */
  renew(): Promise<void>;
  /** Releases the lease if still ours; idempotent. */
  release(): Promise<void>;
}

export interface LeaseOptions {
  owner: string;
  ttlMs: number;
  clock?: () => Date;
}

export async function acquireLease(driver: StorageDriver, key: string, options: LeaseOptions): Promise<Lease> {
  const clock = options.clock ?? (() => new Date());
  const token = randomUUID();
  const recordAt = (): LeaseRecord => {
    const now = clock();
    return {
      owner: options.owner,
      token,
      ...(PROCESS_ID ? { process: PROCESS_ID } : {}),
      acquired_at: now.toISOString(),
      expires_at: new Date(now.getTime() + options.ttlMs).toISOString(),
    };
  };

  let record = recordAt();
  let etag: string | undefined;
  for (let attempt = 0; attempt < 3 && etag === undefined; attempt++) {
    try {
      ({ etag } = await driver.put(key, JSON.stringify(record), { ifNoneMatch: '*' }));
    } catch (error) {
      if (!isLiveMemError(error, 'precondition_failed')) throw error;
      const current = await driver.get(key);
      if (!current) continue; // released meanwhile: try to create again
      const held = parseRecord(current.body);
      const now = clock().getTime();
      if (held && Date.parse(held.expires_at) > now && !heldByDeadProcess(held) && !implausible(held, now, options.ttlMs)) {
        throw new LiveMemError('conflict', `${key} is held by ${held.owner} until ${held.expires_at}`, {
          key,
          holder: held.owner,
          expires_at: held.expires_at,
        });
      }
      // Expired, abandoned, implausible or unreadable: take it over, but only from the version we just read.
      try {
        ({ etag } = await driver.put(key, JSON.stringify(record), { ifMatch: current.etag }));
      } catch (takeover) {
        if (!isLiveMemError(takeover, 'precondition_failed')) throw takeover;
      }
    }
  }
  if (etag === undefined) throw new LiveMemError('conflict', `${key} is being taken by another holder`, { key });

  let released = false;
  /**
   * Renewals run one after another. Two at once (a holder's timer, and its check before a commit)
   * would send the same If-Match: the second would find the etag changed by the first and take the
   * lease for lost to another holder — which a slow store (seconds a write) makes likely. A call
   * while one waits to start shares it (it too starts after the call), so a stalled store queues one.
   */
  let renewing: Promise<void> = Promise.resolve();
  let waiting: Promise<void> | undefined;
  const renewOnce = async () => {
    const next = { ...recordAt(), acquired_at: record.acquired_at };
    try {
      ({ etag } = await driver.put(key, JSON.stringify(next), { ifMatch: etag as string }));
      record = next;
    } catch (error) {
      if (isLiveMemError(error, 'precondition_failed')) {
        throw new LiveMemError('conflict', `lost the lease on ${key}`, { key });
      }
      throw error;
    }
  };
  return {
    key,
    get record() {
      return record;
    },
    renew() {
      if (waiting) return waiting;
      const done = renewing.then(() => {
        waiting = undefined;
        return renewOnce();
      });
      waiting = done;
      renewing = done.catch(() => undefined);
      return done;
    },
    async release() {
      if (released) return;
      released = true;
      const current = await driver.get(key);
      if (current && parseRecord(current.body)?.token === token) await driver.delete(key);
    },
  };
}

/**
 * The state of the lease at `key`, read without touching it: `free` (none), `held` (a holder that
 * may still be running), `expired` or `abandoned` (its holder on this machine is gone) — both taken
 * over by the next acquirer —, `implausible` (it claims to be held far longer than any holder
 * renews it for, see below: taken over too) or `unreadable` (taken over too).
 */
export async function inspectLease(
  driver: StorageDriver,
  key: string,
  clock: () => Date = () => new Date(),
  ttlMs = 0,
): Promise<{ state: 'free' | 'held' | 'expired' | 'abandoned' | 'implausible' | 'unreadable'; record: LeaseRecord | null }> {
  const current = await driver.get(key);
  if (!current) return { state: 'free', record: null };
  const record = parseRecord(current.body);
  if (!record) return { state: 'unreadable', record: null };
  const now = clock().getTime();
  if (Date.parse(record.expires_at) <= now) return { state: 'expired', record };
  if (implausible(record, now, ttlMs)) return { state: 'implausible', record };
  return { state: heldByDeadProcess(record) ? 'abandoned' : 'held', record };
}

/** How far ahead a lease may run out, at the least: a day, or a hundred of its TTL if that is more. */
const PLAUSIBLE_AHEAD_MS = 24 * 3600_000;

/**
 * A holder renews its lease every third of its TTL, so a real lease never runs out more than one
 * TTL ahead. One that runs out days ahead (an archive or a hand planted it; a clock was far off) would
 * block its space until then: it is taken over like an abandoned one.
 */
export function implausible(record: LeaseRecord, now: number, ttlMs = 0): boolean {
  return Date.parse(record.expires_at) - now > Math.max(PLAUSIBLE_AHEAD_MS, 100 * ttlMs);
}

function parseRecord(body: Buffer): LeaseRecord | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as Partial<LeaseRecord>;
    return typeof value.token === 'string' && typeof value.expires_at === 'string' ? (value as LeaseRecord) : null;
  } catch {
    return null;
  }
}

/** Whether the lease's holder ran on this machine, in our pid namespace, and has exited (shared/process.ts). */
function heldByDeadProcess(record: LeaseRecord): boolean {
  if (!record.process) return false;
  const cut = record.process.lastIndexOf('/');
  return processGone(record.process.slice(0, cut), Number(record.process.slice(cut + 1)));
}
