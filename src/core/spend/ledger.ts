import { mapLimit } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { listAll, listPrefixes } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note/note-name.js';
import { readRawMeta } from '../space/meta.js';

export const SPEND_PURPOSES = ['consolidation', 'compaction', 'summaries', 'synthesis', 'embeddings'] as const;
export type SpendPurpose = (typeof SPEND_PURPOSES)[number];

/**
 * One model call paid for a space (or a few, `calls`), as stored at
 * `{space}/_spend/{YYYY-MM-DD}/{stamp}-{id}.json`. `estimated` when the endpoint reported no usage
 * (MCP sampling, some local servers): the tokens are then live-mem's own estimate of the text sent
 * and received.
 */
export interface SpendRecord {
  at: string;
  purpose: SpendPurpose;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  estimated?: boolean;
}

export interface PurposeTotals {
  prompt_tokens: number;
  completion_tokens: number;
  tokens: number;
  calls: number;
}

export interface SpendTotals extends PurposeTotals {
  by_purpose: Partial<Record<SpendPurpose, PurposeTotals>>;
}

/** The cap of a space, and where it comes from (for messages). */
export interface SpendCap {
  /** Tokens per UTC day; 0 = no cap. */
  tokens: number;
  source: 'space' | 'setting';
}

export const CAP_SETTING = 'LIVE_MEM_LLM_DAILY_TOKENS';
export const CAP_FIELD = 'llm_daily_tokens';
/** Parsed records kept in memory (they never change once written): the cap check lists today's folder and reads only new ones. */
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

/**
 * The spend ledger: one create-only object per model call, written before the call's answer is
 * used, so a process killed mid-run has recorded every call it was answered (an object per call
 * rather than one per run: a run's record rewritten after each call would need compare-and-swap
 * and would lose the run's calls if the process died between two rewrites; the object count is
 * bounded by the calls a space makes, a few per consolidation). Figures are sums over the day
 * folders asked for: one listing of the days, then one listing per day that has records.
 */
export function createSpendLedger(context: CoreContext) {
  const { storage } = context;
  const cache = new Map<string, SpendRecord | null>();

  const read = async (key: string): Promise<SpendRecord | null> => {
    if (cache.has(key)) return cache.get(key) ?? null;
    const object = await storage.get(key);
    const record = object ? parseRecord(object.body) : null;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    if (object) cache.set(key, record);
    return record;
  };

  const dayTotals = async (spaceId: string, day: string): Promise<SpendTotals> => {
    const keys: string[] = [];
    for await (const object of listAll(storage, spaceKeys(spaceId).spendDay(day))) if (object.key.endsWith('.json')) keys.push(object.key);
    const totals = emptyTotals();
    for (const record of await mapLimit(keys, storage.parallelism, read)) if (record) add(totals, record);
    return totals;
  };

  /** The space's own cap when its meta sets one (0 included: no cap for it), else the setting's. */
  const capOf = async (spaceId: string): Promise<SpendCap> => {
    const { raw } = await readRawMeta(context, spaceId);
    const own = raw[CAP_FIELD];
    if (typeof own === 'number' && Number.isSafeInteger(own) && own >= 0) return { tokens: own, source: 'space' };
    return { tokens: context.limits.llmDailyTokens, source: 'setting' };
  };

  return {
    capOf,

    /** Writes one record (create-only) under the day of its `at`. */
    async record(spaceId: string, record: SpendRecord): Promise<void> {
      const at = new Date(record.at);
      const key = `${spaceKeys(spaceId).spendDay(dayOf(at))}${toStamp(at)}-${context.randomId()}.json`;
      await storage.put(key, `${JSON.stringify(record)}\n`, { contentType: 'application/json', ifNoneMatch: '*' });
      cache.set(key, record);
    },

    /**
     * Throws `quota_exceeded` when a call of about `tokens` (its prompt and its most output) would
     * take the space past its daily cap. Calls running at once may each pass: the cap is checked
     * before each call, not reserved.
     */
    async check(spaceId: string, tokens: number, purpose: SpendPurpose): Promise<void> {
      const cap = await capOf(spaceId);
      if (cap.tokens === 0) return;
      const day = dayOf(context.clock());
      const used = (await dayTotals(spaceId, day)).tokens;
      if (used + tokens <= cap.tokens) return;
      const named =
        cap.source === 'space'
          ? `the space's own daily cap ${CAP_FIELD} = ${cap.tokens} (set by space_update; \`live-mem space update ${spaceId} --llm-daily-tokens N\` changes it)`
          : `the daily cap ${CAP_SETTING} = ${cap.tokens} (the setting; a space's own llm_daily_tokens overrides it)`;
      throw new LiveMemError(
        'quota_exceeded',
        `a model call (${purpose}) of up to ${tokens} tokens was refused: ${used} tokens already spent for space '${spaceId}' on ${day} (UTC), and ${used + tokens} would pass ${named}`,
        { space_id: spaceId, cap: cap.tokens, cap_source: cap.source === 'space' ? CAP_FIELD : CAP_SETTING, day, used, requested: tokens },
      );
    },

    dayTotals,

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

export type SpendLedger = ReturnType<typeof createSpendLedger>;
