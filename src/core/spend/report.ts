import { invalid } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { requireSpace } from '../space-meta.js';
import { parseDateTime, validateSpaceId } from '../validate.js';
import { capReport } from './cap.js';
import { inspectHolds } from './holds.js';
import { dayOf } from './records.js';

/** Days `space_info` sums (today included), and the most `live-mem spend --since` may ask for: reading costs a listing per day. */
export const INFO_DAYS = 30;
export const MAX_REPORT_DAYS = 366;

const daysBefore = (day: string, days: number): string => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000));

/** The cap in force as reported (cap.ts): null when there is none and nobody set one, else its tokens, who set it and why. */
const capFor = async (context: CoreContext, spaceId: string) => capReport(await context.spend.capOf(spaceId), spaceId);

/**
 * What `space_info` says of a space's model spend: today and the last 30 days (UTC), by purpose, and
 * its cap; and today's holds (holds.ts): the tokens calls in flight claim against the cap
 * (`in_flight`), and holds found that count for nothing, which doctor reports and `--fix` removes.
 */
export async function spendSummary(context: CoreContext, spaceId: string) {
  const today = dayOf(context.clock());
  const cap = await context.spend.capOf(spaceId);
  const [{ total, days }, holds] = await Promise.all([
    context.spend.range(spaceId, daysBefore(today, INFO_DAYS - 1), today),
    inspectHolds(context, spaceId, cap, today),
  ]);
  const { day: _day, ...todayTotals } = days[days.length - 1] as (typeof days)[number];
  const live = holds.filter((entry) => entry.state === 'live');
  const ignored = holds.length - live.length;
  return {
    today: todayTotals,
    in_flight: { calls: live.length, tokens: live.reduce((sum, entry) => sum + (entry.hold?.tokens ?? 0), 0) },
    ...(ignored > 0
      ? {
          holds_not_counted: ignored,
          hint: `${ignored} spend hold(s) today count for nothing (stale or invalid): \`live-mem doctor ${spaceId} --fix\` removes them`,
        }
      : {}),
    last_30_days: total,
    daily_cap: capReport(cap, spaceId),
  };
}

/** `live-mem spend`: totals per purpose and per day since `since` (default: the last 30 days), UTC days. */
export async function spendReport(context: CoreContext, caller: Caller, input: { space_id: string; since?: string }) {
  const spaceId = validateSpaceId(input.space_id);
  authorize(caller, 'read', spaceId);
  const today = dayOf(context.clock());
  let from = daysBefore(today, INFO_DAYS - 1);
  if (input.since !== undefined) {
    const since = parseDateTime(input.since, 'since');
    if (!since) throw invalid('since must be a date or a date-time (ISO 8601), e.g. 2026-01-31');
    from = dayOf(since);
    if (from > today) throw invalid(`since ${input.since} is after today (${today}, UTC)`);
    if (from < daysBefore(today, MAX_REPORT_DAYS - 1)) throw invalid(`since ${input.since} is more than ${MAX_REPORT_DAYS} days ago: ask for a shorter range`);
  }
  await requireSpace(context, spaceId);
  const [{ total, days }, cap] = await Promise.all([context.spend.range(spaceId, from, today), capFor(context, spaceId)]);
  return { status: 'ok' as const, space_id: spaceId, since: from, until: today, total, days: days.filter((day) => day.calls > 0), daily_cap: cap };
}
