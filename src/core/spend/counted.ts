import { mapLimit } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext, SpendCap, SpendPurpose } from '../context.js';
import { spaceKeys } from '../layout.js';
import { CAP_FIELD, CAP_SETTING, describeCap, SEARCH_SHARE_SETTING } from './cap.js';
import { holdReachMs, holdState, parseHold } from './holds.js';
import { type LedgerState, readCached, readRecord } from './ledger-state.js';

/**
 * A capped space's day as a reservation judges it (ledger.ts): the tokens that count against the cap
 * and against the searches' share, and the refusal a call gets when it would pass either.
 */

/** Tokens counted against a cap: all of them, and those of searches (their own allowance). */
export interface Counted {
  tokens: number;
  search: number;
}

export const countIn = (counted: Counted, purpose: SpendPurpose, tokens: number): void => {
  counted.tokens += tokens;
  if (purpose === 'search') counted.search += tokens;
};

/**
 * What counts against the cap today: the day's records (the store's and this process's), the
 * holds of other processes' calls in flight (holds.ts: those of calls over or of processes gone
 * left out and removed, those no call could have left — too far ahead, more than the cap — left
 * out for doctor to report), this process's claims. Everything but the claims is read first; the
 * claims are added by the caller in the same synchronous step that decides.
 */
export async function counted(state: LedgerState, spaceId: string, day: string, cap: SpendCap): Promise<() => Counted> {
  const { context, ownHolds, ownRecords, claims } = state;
  const { storage } = context;
  const folder = spaceKeys(spaceId).spendDay(day);
  const recordKeys: string[] = [];
  const holdKeys: string[] = [];
  for await (const object of listAll(storage, folder)) {
    if (object.key.endsWith('.json')) recordKeys.push(object.key);
    else if (object.key.endsWith('.hold') && !ownHolds.has(object.key)) holdKeys.push(object.key);
  }
  const [records, holds] = await Promise.all([
    mapLimit(recordKeys, storage.parallelism, (key) => readRecord(state, key)),
    mapLimit(holdKeys, storage.parallelism, (key) => readCached(state, key, parseHold)),
  ]);
  const now = context.clock().getTime();
  const bounds = { reachMs: holdReachMs(context), cap };
  return () => {
    const total: Counted = { tokens: 0, search: 0 };
    const listed = new Set(recordKeys);
    for (const entry of records) if (entry) countIn(total, entry.purpose, entry.prompt_tokens + entry.completion_tokens);
    for (const [key, entry] of ownRecords.get(folder)?.records ?? [])
      if (!listed.has(key)) countIn(total, entry.purpose, entry.prompt_tokens + entry.completion_tokens);
    holds.forEach((hold, i) => {
      const state = holdState(hold, now, bounds);
      if (state === 'live' && hold) countIn(total, hold.purpose, hold.tokens);
      else if (state === 'expired' || state === 'abandoned') void storage.delete(holdKeys[i] as string).catch(() => undefined); // left by a process that died
    });
    for (const claim of claims.get(spaceId)?.values() ?? []) countIn(total, claim.purpose, claim.tokens);
    return total;
  };
}

/** The `quota_exceeded` error of a call refused: what was spent and claimed, against which cap or share. */
export function refusal(context: CoreContext, spaceId: string, cap: SpendCap, day: string, used: Counted, tokens: number, purpose: SpendPurpose): LiveMemError {
  const search = purpose === 'search' && used.search + tokens > cap.search;
  const [spent, limit, named] = search
    ? [
        used.search,
        cap.search,
        `the share of the daily cap that searches' query embeddings may use (${SEARCH_SHARE_SETTING} = ${context.limits.llmSearchShare}% of ${describeCap(cap, spaceId)})`,
      ]
    : [used.tokens, cap.tokens, describeCap(cap, spaceId)];
  return new LiveMemError(
    'quota_exceeded',
    `a model call (${purpose}) of up to ${tokens} tokens was refused: ${spent} tokens already spent or claimed by calls in flight ${
      search ? 'by searches ' : ''
    }for space '${spaceId}' on ${day} (UTC), and ${spent + tokens} would pass ${limit} tokens, ${named}`,
    {
      space_id: spaceId,
      cap: cap.tokens,
      cap_source: cap.source === 'setting' ? CAP_SETTING : CAP_FIELD,
      ...(search ? { search_allowance: cap.search } : {}),
      day,
      used: spent,
      requested: tokens,
    },
  );
}
