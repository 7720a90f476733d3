import { mapLimit } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { PROCESS_ID } from '../../shared/process.js';
import { listAll, listPrefixes } from '../../storage/list.js';
import type { CoreContext, PurposeTotals, Reservation, SpendCap, SpendCost, SpendLedger, SpendPurpose, SpendRecord, SpendTotals } from '../context.js';
import { SPEND_PURPOSES } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note-name.js';
import { readRawMeta } from '../space-meta.js';
import { CAP_FIELD, CAP_SETTING, capInForce, describeCap, SEARCH_SHARE_SETTING } from './cap.js';
import { HOLD_SLACK_MS, type Hold, holdReachMs, holdState, parseHold } from './holds.js';

/** Parsed records and holds kept in memory (they never change once written): a reservation lists today's folder and reads only new ones. */
const CACHE_LIMIT = 20_000;

export const dayOf = (date: Date): string => date.toISOString().slice(0, 10);

/** Every UTC day from `from` to `to`, both included, oldest first. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(`${from}T00:00:00Z`); time <= Date.parse(`${to}T00:00:00Z`); time += 86_400_000) days.push(dayOf(new Date(time)));
  return days;
}

const emptyTotals = (): SpendTotals => ({ prompt_tokens: 0, completion_tokens: 0, tokens: 0, calls: 0, by_purpose: {} });

function add(totals: SpendTotals, record: SpendRecord): void {
  const purpose = (totals.by_purpose[record.purpose] ??= { prompt_tokens: 0, completion_tokens: 0, tokens: 0, calls: 0 });
  for (const target of [totals, purpose]) {
    target.prompt_tokens += record.prompt_tokens;
    target.completion_tokens += record.completion_tokens;
    target.tokens += record.prompt_tokens + record.completion_tokens;
    target.calls += record.calls;
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);

/** A stored record, or null when it is not one (it is then left out of every figure). */
function parseRecord(body: Buffer): SpendRecord | null {
  try {
    const raw = JSON.parse(body.toString('utf8')) as Partial<SpendRecord>;
    if (typeof raw !== 'object' || raw === null || !SPEND_PURPOSES.includes(raw.purpose as SpendPurpose)) return null;
    return {
      at: String(raw.at ?? ''),
      purpose: raw.purpose as SpendPurpose,
      model: String(raw.model ?? ''),
      prompt_tokens: count(raw.prompt_tokens),
      completion_tokens: count(raw.completion_tokens),
      calls: count(raw.calls),
      ...(raw.estimated === true ? { estimated: true } : {}),
    };
  } catch {
    return null;
  }
}

/** Tokens counted against a cap: all of them, and those of searches (their own allowance). */
interface Counted {
  tokens: number;
  search: number;
}

const countIn = (counted: Counted, purpose: SpendPurpose, tokens: number): void => {
  counted.tokens += tokens;
  if (purpose === 'search') counted.search += tokens;
};

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
  const cache = new Map<string, SpendRecord | Hold | null>();
  /** This process's claims in flight, per space: the tokens each may still spend. */
  const claims = new Map<string, Map<string, { purpose: SpendPurpose; tokens: number }>>();
  /** Holds this process wrote: its claims are counted from `claims`, not from the store. */
  const ownHolds = new Set<string>();
  /** Records this process wrote, by day folder: counted even while a listing started before them runs (or if they could not be stored). */
  const ownRecords = new Map<string, { day: string; records: Map<string, SpendRecord> }>();

  const read = async <T extends SpendRecord | Hold>(key: string, parse: (body: Buffer) => T | null): Promise<T | null> => {
    if (cache.has(key)) return (cache.get(key) as T | null) ?? null;
    const object = await storage.get(key);
    const parsed = object ? parse(object.body) : null;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    if (object) cache.set(key, parsed);
    return parsed;
  };
  const readRecord = (key: string) => read(key, parseRecord);

  const dayTotals = async (spaceId: string, day: string): Promise<SpendTotals> => {
    const keys: string[] = [];
    for await (const object of listAll(storage, spaceKeys(spaceId).spendDay(day))) if (object.key.endsWith('.json')) keys.push(object.key);
    const totals = emptyTotals();
    for (const record of await mapLimit(keys, storage.parallelism, readRecord)) if (record) add(totals, record);
    return totals;
  };

  /** The cap in force for a space (cap.ts): its meta read now. */
  const capFor = async (spaceId: string): Promise<SpendCap> => capInForce((await readRawMeta(context, spaceId)).raw, context.limits);

  const remember = (folder: string, day: string, key: string, record: SpendRecord): void => {
    for (const [other, { day: itsDay }] of ownRecords) if (itsDay < day) ownRecords.delete(other);
    let own = ownRecords.get(folder);
    if (!own) ownRecords.set(folder, (own = { day, records: new Map() }));
    own.records.set(key, record);
  };

  /** Writes one record (create-only) under the day of its `at`; counted by this process even if the store fails. */
  const record = async (spaceId: string, entry: SpendRecord): Promise<void> => {
    const at = new Date(entry.at);
    const day = dayOf(at);
    const folder = spaceKeys(spaceId).spendDay(day);
    const key = `${folder}${toStamp(at)}-${context.randomId()}.json`;
    remember(folder, day, key, entry);
    await storage.put(key, `${JSON.stringify(entry)}\n`, { contentType: 'application/json', ifNoneMatch: '*' });
    cache.set(key, entry);
  };

  /**
   * What counts against the cap today: the day's records (the store's and this process's), the
   * holds of other processes' calls in flight (holds.ts: those of calls over or of processes gone
   * left out and removed, those no call could have left — too far ahead, more than the cap — left
   * out for doctor to report), this process's claims. Everything but the claims is read first; the
   * claims are added by the caller in the same synchronous step that decides.
   */
  const counted = async (spaceId: string, day: string, cap: SpendCap): Promise<() => Counted> => {
    const folder = spaceKeys(spaceId).spendDay(day);
    const recordKeys: string[] = [];
    const holdKeys: string[] = [];
    for await (const object of listAll(storage, folder)) {
      if (object.key.endsWith('.json')) recordKeys.push(object.key);
      else if (object.key.endsWith('.hold') && !ownHolds.has(object.key)) holdKeys.push(object.key);
    }
    const [records, holds] = await Promise.all([
      mapLimit(recordKeys, storage.parallelism, readRecord),
      mapLimit(holdKeys, storage.parallelism, (key) => read(key, parseHold)),
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
  };

  const refusal = (spaceId: string, cap: SpendCap, day: string, used: Counted, tokens: number, purpose: SpendPurpose): LiveMemError => {
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
  };

  return {
    capOf: capFor,
    record,
    dayTotals,

    /**
     * Claims `tokens` (a call's prompt estimate and most output) for a call of `purpose`, or throws
     * `quota_exceeded` (nothing claimed, nothing to release) when what is spent and claimed today
     * and this call would pass the space's cap, or, for a search, its share of the cap. `timeoutMs`
     * is the call's: past it (and a minute), a hold left by a process that died no longer counts.
     */
    async reserve(spaceId: string, tokens: number, purpose: SpendPurpose, timeoutMs: number): Promise<Reservation> {
      const entryOf = (cost: SpendCost): SpendRecord => ({
        at: context.clock().toISOString(),
        purpose,
        model: cost.model,
        prompt_tokens: cost.prompt_tokens,
        completion_tokens: cost.completion_tokens,
        calls: 1,
        ...(cost.estimated ? { estimated: true } : {}),
      });
      const cap = await capFor(spaceId);
      if (cap.tokens === 0) return { record: (cost) => record(spaceId, entryOf(cost)), release: async () => undefined };
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
        const total = await counted(spaceId, day, cap);
        // From here to the claim, nothing is awaited: the claims of this process are decided one at a time.
        const used = total();
        if (used.tokens + tokens > cap.tokens || (purpose === 'search' && used.search + tokens > cap.search)) {
          throw refusal(spaceId, cap, day, used, tokens, purpose);
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
          const writing = record(spaceId, entry);
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
    },

    /** Totals for each UTC day from `from` to `to` (both `YYYY-MM-DD`), and over them all. */
    async range(spaceId: string, from: string, to: string) {
      const days = daysBetween(from, to);
      // One listing of the day folders, then one per day that has records: most days of a quiet space cost nothing.
      const folder = spaceKeys(spaceId).spend;
      const present = new Set((await listPrefixes(storage, folder)).map((prefix) => prefix.slice(folder.length, -1)));
      const perDay = await mapLimit(days, Math.max(1, Math.min(8, storage.parallelism)), (day) =>
        present.has(day) ? dayTotals(spaceId, day) : Promise.resolve(emptyTotals()),
      );
      const total = emptyTotals();
      for (const day of perDay) {
        for (const [purpose, figures] of Object.entries(day.by_purpose) as Array<[SpendPurpose, PurposeTotals]>) {
          add(total, { at: '', purpose, model: '', prompt_tokens: figures.prompt_tokens, completion_tokens: figures.completion_tokens, calls: figures.calls });
        }
      }
      return { total, days: days.map((day, i) => ({ day, ...(perDay[i] as SpendTotals) })) };
    },
  };
}
