import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext, SpendCap, SpendPurpose, SpendRecord, SpendTotals } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note-name.js';
import { readRawMeta } from '../space-meta.js';
import { capInForce } from './cap.js';
import type { Hold } from './holds.js';
import { addRecord, dayOf, emptyTotals, parseRecord } from './records.js';

/** Parsed records and holds kept in memory (they never change once written): a reservation lists today's folder and reads only new ones. */
const CACHE_LIMIT = 20_000;

/**
 * What one process's spend ledger (ledger.ts) keeps between calls: the records and holds it has
 * read, and its own claims, holds and records, which it counts itself rather than from the store.
 */
export interface LedgerState {
  context: CoreContext;
  cache: Map<string, SpendRecord | Hold | null>;
  /** This process's claims in flight, per space: the tokens each may still spend. */
  claims: Map<string, Map<string, { purpose: SpendPurpose; tokens: number }>>;
  /** Holds this process wrote: its claims are counted from `claims`, not from the store. */
  ownHolds: Set<string>;
  /** Records this process wrote, by day folder: counted even while a listing started before them runs (or if they could not be stored). */
  ownRecords: Map<string, { day: string; records: Map<string, SpendRecord> }>;
}

export function createLedgerState(context: CoreContext): LedgerState {
  return { context, cache: new Map(), claims: new Map(), ownHolds: new Set(), ownRecords: new Map() };
}

/** A record or hold read once: they never change once written. */
export async function readCached<T extends SpendRecord | Hold>(state: LedgerState, key: string, parse: (body: Buffer) => T | null): Promise<T | null> {
  const { cache } = state;
  const { storage } = state.context;
  if (cache.has(key)) return (cache.get(key) as T | null) ?? null;
  const object = await storage.get(key);
  const parsed = object ? parse(object.body) : null;
  if (cache.size >= CACHE_LIMIT) cache.clear();
  if (object) cache.set(key, parsed);
  return parsed;
}

export const readRecord = (state: LedgerState, key: string) => readCached(state, key, parseRecord);

/** The totals of one day folder of a space (its records; holds are not spend). */
export async function dayTotals(state: LedgerState, spaceId: string, day: string): Promise<SpendTotals> {
  const { storage } = state.context;
  const keys: string[] = [];
  for await (const object of listAll(storage, spaceKeys(spaceId).spendDay(day))) if (object.key.endsWith('.json')) keys.push(object.key);
  const totals = emptyTotals();
  for (const record of await mapLimit(keys, storage.parallelism, (key) => readRecord(state, key))) if (record) addRecord(totals, record);
  return totals;
}

/** The cap in force for a space (cap.ts): its meta read now. */
export const capFor = async (context: CoreContext, spaceId: string): Promise<SpendCap> => capInForce((await readRawMeta(context, spaceId)).raw, context.limits);

/** Keeps a record this process wrote, for its day folder (older days' are dropped). */
function remember(state: LedgerState, folder: string, day: string, key: string, record: SpendRecord): void {
  const { ownRecords } = state;
  for (const [other, { day: itsDay }] of ownRecords) if (itsDay < day) ownRecords.delete(other);
  let own = ownRecords.get(folder);
  if (!own) ownRecords.set(folder, (own = { day, records: new Map() }));
  own.records.set(key, record);
}

/** Writes one record (create-only) under the day of its `at`; counted by this process even if the store fails. */
export async function recordSpend(state: LedgerState, spaceId: string, entry: SpendRecord): Promise<void> {
  const { context } = state;
  const at = new Date(entry.at);
  const day = dayOf(at);
  const folder = spaceKeys(spaceId).spendDay(day);
  const key = `${folder}${toStamp(at)}-${context.randomId()}.json`;
  remember(state, folder, day, key, entry);
  await context.storage.put(key, `${JSON.stringify(entry)}\n`, { contentType: 'application/json', ifNoneMatch: '*' });
  state.cache.set(key, entry);
}
