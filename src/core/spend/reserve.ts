import { PROCESS_ID } from '../../shared/process.js';
import type { Reservation, SpendCost, SpendPurpose, SpendRecord } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note-name.js';
import { counted, refusal } from './counted.js';
import { HOLD_SLACK_MS, type Hold } from './holds.js';
import { capFor, type LedgerState, recordSpend } from './ledger-state.js';
import { dayOf } from './records.js';

/**
 * Claims `tokens` (a call's prompt estimate and most output) for a call of `purpose`, or throws
 * `quota_exceeded` (nothing claimed, nothing to release) when what is spent and claimed today
 * and this call would pass the space's cap, or, for a search, its share of the cap. `timeoutMs`
 * is the call's: past it (and a minute), a hold left by a process that died no longer counts.
 */
export async function reserve(state: LedgerState, spaceId: string, tokens: number, purpose: SpendPurpose, timeoutMs: number): Promise<Reservation> {
  const { context, claims, ownHolds } = state;
  const { storage } = context;
  const write = (entry: SpendRecord) => recordSpend(state, spaceId, entry);
  const entryOf = (cost: SpendCost): SpendRecord => ({
    at: context.clock().toISOString(),
    purpose,
    model: cost.model,
    prompt_tokens: cost.prompt_tokens,
    completion_tokens: cost.completion_tokens,
    calls: 1,
    ...(cost.estimated ? { estimated: true } : {}),
  });
  const cap = await capFor(context, spaceId);
  if (cap.tokens === 0) return { record: (cost) => write(entryOf(cost)), release: async () => undefined };
  const id = context.randomId();
  const now = context.clock();
  const day = dayOf(now);
  const holdKey = `${spaceKeys(spaceId).spendDay(day)}${toStamp(now)}-${id}.hold`;
  const hold: Hold = {
    purpose,
    tokens,
    expires_at: new Date(now.getTime() + timeoutMs + HOLD_SLACK_MS).toISOString(),
    ...(PROCESS_ID ? { process: PROCESS_ID } : {}),
  };
  ownHolds.add(holdKey);
  const dropHold = async () => {
    await storage.delete(holdKey).catch((error: unknown) => context.logger.debug(`could not remove the spend hold ${holdKey}`, { error: String(error) }));
    ownHolds.delete(holdKey);
  };
  try {
    // Written before the listing: a process claiming at the same time sees it (see above).
    await storage.put(holdKey, `${JSON.stringify(hold)}\n`, { contentType: 'application/json', ifNoneMatch: '*' });
    const total = await counted(state, spaceId, day, cap);
    // From here to the claim, nothing is awaited: the claims of this process are decided one at a time.
    const used = total();
    if (used.tokens + tokens > cap.tokens || (purpose === 'search' && used.search + tokens > cap.search)) {
      throw refusal(context, spaceId, cap, day, used, tokens, purpose);
    }
  } catch (error) {
    await dropHold();
    throw error;
  }
  let mine = claims.get(spaceId);
  if (!mine) claims.set(spaceId, (mine = new Map()));
  const claim = { purpose, tokens };
  mine.set(id, claim);
  let unrecorded = false;
  return {
    async record(cost) {
      const entry = entryOf(cost);
      // The record and the claim it replaces change in one step for this process's own count.
      const writing = write(entry);
      claim.tokens = Math.max(0, claim.tokens - entry.prompt_tokens - entry.completion_tokens);
      try {
        await writing;
      } catch (error) {
        unrecorded = true;
        throw error;
      }
    },
    async release() {
      mine.delete(id);
      if (mine.size === 0 && claims.get(spaceId) === mine) claims.delete(spaceId);
      // A cost the store could not take keeps its hold until it expires: other processes still count it.
      if (unrecorded) ownHolds.delete(holdKey);
      else await dropHold();
    },
  };
}
