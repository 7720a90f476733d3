import { mapLimit } from '../../shared/concurrency.js';
import { listPrefixes } from '../../storage/list.js';
import type { CoreContext, PurposeTotals, SpendLedger, SpendPurpose, SpendTotals } from '../context.js';
import { spaceKeys } from '../layout.js';
import { capFor, createLedgerState, dayTotals, recordSpend } from './ledger-state.js';
import { addRecord, daysBetween, emptyTotals } from './records.js';
import { reserve } from './reserve.js';

/**
 * The spend ledger: one create-only object per model call, written before the call's answer is
 * used, so a process killed mid-run has recorded every call it was answered (an object per call
 * rather than one per run: a run's record rewritten after each call would need compare-and-swap
 * and would lose the run's calls if the process died between two rewrites; the object count is
 * bounded by the calls a space makes, a few per consolidation). Figures are sums over the day
 * folders asked for: one listing of the days, then one listing per day that has records.
 *
 * A capped space's calls are reserved before they are sent, not checked: a call claims its most
 * cost (prompt estimate and most output) before it starts, and what is spent, recorded and claimed
 * by calls in flight must fit the cap with it, so calls started at once cannot each pass. Within a
 * process the claims are counted in memory, and a claim passes or fails in one synchronous step
 * after the day's listing, so concurrent calls are decided one after another. Across processes,
 * each claim is also a hold object in the day's folder, written before that listing: of two
 * processes claiming at once, each sees the other's hold (a store's listing shows what was written
 * before it started), so both may be refused where one would have fitted, never both let through.
 * A hold goes when its call is over; one left by a process that died counts until its call's
 * timeout has passed, then is ignored and removed. An uncapped space writes no hold.
 */
export function createSpendLedger(context: CoreContext): SpendLedger {
  const { storage } = context;
  const state = createLedgerState(context);

  return {
    capOf: (spaceId) => capFor(context, spaceId),
    record: (spaceId, entry) => recordSpend(state, spaceId, entry),
    dayTotals: (spaceId, day) => dayTotals(state, spaceId, day),

    /** Claims a call's most cost against the space's cap, or refuses the call (reserve.ts). */
    reserve: (spaceId, tokens, purpose, timeoutMs) => reserve(state, spaceId, tokens, purpose, timeoutMs),

    /** Totals for each UTC day from `from` to `to` (both `YYYY-MM-DD`), and over them all. */
    async range(spaceId: string, from: string, to: string) {
      const days = daysBetween(from, to);
      // One listing of the day folders, then one per day that has records: most days of a quiet space cost nothing.
      const folder = spaceKeys(spaceId).spend;
      const present = new Set((await listPrefixes(storage, folder)).map((prefix) => prefix.slice(folder.length, -1)));
      const perDay = await mapLimit(days, Math.max(1, Math.min(8, storage.parallelism)), (day) =>
        present.has(day) ? dayTotals(state, spaceId, day) : Promise.resolve(emptyTotals()),
      );
      const total = emptyTotals();
      for (const day of perDay) {
        for (const [purpose, figures] of Object.entries(day.by_purpose) as Array<[SpendPurpose, PurposeTotals]>) {
          addRecord(total, {
            at: '',
            purpose,
            model: '',
            prompt_tokens: figures.prompt_tokens,
            completion_tokens: figures.completion_tokens,
            calls: figures.calls,
          });
        }
      }
      return { total, days: days.map((day, i) => ({ day, ...(perDay[i] as SpendTotals) })) };
    },
  };
}
