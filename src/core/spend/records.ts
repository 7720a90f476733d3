import type { SpendPurpose, SpendRecord, SpendTotals } from '../context.js';
import { SPEND_PURPOSES } from '../context.js';

/**
 * The spend ledger's records as figures (ledger.ts): the UTC day a record falls in, a stored record
 * parsed (or left out when it is not one), and records summed into totals per purpose.
 */

/** The UTC day (`YYYY-MM-DD`) a record of `date` is filed under. */
export const dayOf = (date: Date): string => date.toISOString().slice(0, 10);

/** Every UTC day from `from` to `to`, both included, oldest first. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(`${from}T00:00:00Z`); time <= Date.parse(`${to}T00:00:00Z`); time += 86_400_000) days.push(dayOf(new Date(time)));
  return days;
}

export const emptyTotals = (): SpendTotals => ({ prompt_tokens: 0, completion_tokens: 0, tokens: 0, calls: 0, by_purpose: {} });

/** Adds a record's figures to totals, overall and under its purpose. */
export function addRecord(totals: SpendTotals, record: SpendRecord): void {
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
export function parseRecord(body: Buffer): SpendRecord | null {
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
