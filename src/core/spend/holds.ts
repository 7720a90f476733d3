import { mapLimit } from '../../shared/concurrency.js';
import { processGone } from '../../shared/process.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext, SpendCap, SpendPurpose } from '../context.js';
import { SPEND_PURPOSES } from '../context.js';
import { spaceKeys } from '../layout.js';

/**
 * A capped call in flight, as other processes see it: `{space}/_spend/{day}/{stamp}-{id}.hold` (not
 * `.json`: never summed as spent), written by reserve.ts before the call and removed after it. Holds
 * are bounded as leases are (storage/lease.ts): a process can only hold what its own check could let
 * through, for as long as its call may take, so whatever else is found in a day's folder — left by a
 * process that died, planted by a hand or an archive — stops counting instead of blocking a space's
 * model calls until it runs out. `doctor` reports those and `--fix` removes them (system/doctor-spend.ts).
 */
export interface Hold {
  purpose: SpendPurpose;
  tokens: number;
  expires_at: string;
  /** The writing process, where it can be told apart (shared/process.ts): a hold of a process gone counts no more. */
  process?: string;
}

/** How long after its call's timeout a hold still counts: the time a process takes to record the answer and remove it. */
export const HOLD_SLACK_MS = 60_000;

/**
 * `live`: a call in flight, counted. The others are not counted: `expired` (its call's time is over:
 * the process died), `abandoned` (its process, on this machine, is gone), `too_far` (it runs out later
 * than any call started now could: `reachMs`), `too_large` (it claims more than the cap, or a search
 * more than its share: its own check refuses it, so no real hold stays past that check), `unreadable`.
 */
export type HoldState = 'live' | 'expired' | 'abandoned' | 'too_far' | 'too_large' | 'unreadable';

/** Whether a hold counts against the cap, and why not when it does not. */
export function holdState(hold: Hold | null, now: number, bounds: { reachMs: number; cap: SpendCap }): HoldState {
  if (!hold) return 'unreadable';
  const expires = Date.parse(hold.expires_at);
  if (!Number.isFinite(expires)) return 'unreadable';
  if (expires <= now) return 'expired';
  if (expires - now > bounds.reachMs) return 'too_far';
  if (hold.tokens > (hold.purpose === 'search' ? bounds.cap.search : bounds.cap.tokens)) return 'too_large';
  return heldByDeadProcess(hold) ? 'abandoned' : 'live';
}

/** Embeddings' calls are bounded by their own timeout (recall: 30 s), under this even when model calls are given less. */
const SHORTEST_REACH_MS = 5 * 60_000;

/** The longest a hold written now may run out ahead: the longest model call of this configuration (its timeout), and the slack. */
export const holdReachMs = (context: CoreContext): number => Math.max(context.consolidation.timeoutMs, SHORTEST_REACH_MS) + HOLD_SLACK_MS;

export function parseHold(body: Buffer): Hold | null {
  try {
    const raw = JSON.parse(body.toString('utf8')) as Partial<Hold>;
    if (typeof raw !== 'object' || raw === null || !SPEND_PURPOSES.includes(raw.purpose as SpendPurpose) || typeof raw.expires_at !== 'string') return null;
    if (typeof raw.tokens !== 'number' || !Number.isSafeInteger(raw.tokens) || raw.tokens < 0) return null;
    return {
      purpose: raw.purpose as SpendPurpose,
      tokens: raw.tokens,
      expires_at: raw.expires_at,
      ...(typeof raw.process === 'string' ? { process: raw.process } : {}),
    };
  } catch {
    return null;
  }
}

function heldByDeadProcess(hold: Hold): boolean {
  if (!hold.process) return false;
  const cut = hold.process.lastIndexOf('/');
  return processGone(hold.process.slice(0, cut), Number(hold.process.slice(cut + 1)));
}

export interface InspectedHold {
  key: string;
  hold: Hold | null;
  state: HoldState;
}

/** The holds of one UTC day, or of every day (a planted one may sit in any), read and judged against `cap`. */
export async function inspectHolds(context: CoreContext, spaceId: string, cap: SpendCap, day?: string): Promise<InspectedHold[]> {
  const keys: string[] = [];
  const folder = day === undefined ? spaceKeys(spaceId).spend : spaceKeys(spaceId).spendDay(day);
  for await (const object of listAll(context.storage, folder)) if (object.key.endsWith('.hold')) keys.push(object.key);
  const now = context.clock().getTime();
  const bounds = { reachMs: holdReachMs(context), cap };
  const found = await mapLimit(keys, context.storage.parallelism, async (key) => {
    const object = await context.storage.get(key);
    if (!object) return null; // its call ended meanwhile
    const hold = parseHold(object.body);
    return { key, hold, state: holdState(hold, now, bounds) };
  });
  return found.filter((entry) => entry !== null);
}
