import { LiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { Limits, SpendCap } from '../context.js';

/**
 * A space's daily cap of model tokens: who may set what, and what is in force. The operator's
 * setting is the cap of every space; an admin may set another for one space (higher, lower, or none);
 * any writer may lower what is in force, never raise or clear it. So the cap an agent with `write`
 * can reach is always at most the one an operator or an admin chose, whatever it sends:
 *
 *   in force = min(the admin's cap for the space if one is set, else the setting; the lowered cap)
 *
 * (0 = no cap on either side of the min). The meta says who set each value: `llm_daily_tokens_admin`
 * is what an admin's `space_update` writes (writing it by hand is the same act: whoever writes the
 * store's files can change the setting too); `llm_daily_tokens_lowered` is a writer's. The field of
 * older versions, `llm_daily_tokens`, which won over the setting both ways, is read as a lowered cap:
 * an old store's meta, or a hand edit of it, never lifts the operator's cap. It is never written any
 * more: a process of an older version sharing the store would read a writer's value there as winning.
 */

export const CAP_SETTING = 'LIVE_MEM_LLM_DAILY_TOKENS';
export const SEARCH_SHARE_SETTING = 'LIVE_MEM_LLM_SEARCH_SHARE';
/** The argument of `space_update`, and the meta field older versions wrote (now read as a lowered cap). */
export const CAP_FIELD = 'llm_daily_tokens';
export const ADMIN_CAP_FIELD = 'llm_daily_tokens_admin';
export const LOWERED_CAP_FIELD = 'llm_daily_tokens_lowered';

const tokensIn = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);

/** 0 is "no cap": the smaller of two caps. */
const lower = (a: number, b: number): number => (a === 0 ? b : b === 0 ? a : Math.min(a, b));

/** The cap in force for a space whose meta is `meta`, under the operator's `limits`. */
export function capInForce(meta: Record<string, unknown>, limits: Pick<Limits, 'llmDailyTokens' | 'llmSearchShare'>): SpendCap {
  const admin = tokensIn(meta[ADMIN_CAP_FIELD]);
  const ceiling = admin ?? limits.llmDailyTokens;
  const lowered = lower(tokensIn(meta[LOWERED_CAP_FIELD]) ?? 0, tokensIn(meta[CAP_FIELD]) ?? 0);
  const tokens = lower(ceiling, lowered);
  const source = lowered !== 0 && tokens === lowered && lowered !== ceiling ? 'lowered' : admin !== undefined ? 'admin' : 'setting';
  return { tokens, source, setting: limits.llmDailyTokens, ceiling, search: Math.floor((tokens * limits.llmSearchShare) / 100) };
}

/** The cap in force as a phrase: its figure, who set it, and what may change it. */
export function describeCap(cap: SpendCap, spaceId: string): string {
  const setting = `${CAP_SETTING} = ${cap.setting}`;
  switch (cap.source) {
    case 'setting':
      return cap.tokens === 0
        ? `no cap (${setting})`
        : `the daily cap ${setting} (the operator's setting, for every space; a writer may only lower it for a space, an admin may set another)`;
    case 'admin':
      return cap.tokens === 0
        ? `no cap: an admin lifted ${setting} for space '${spaceId}' (${ADMIN_CAP_FIELD} = 0)`
        : `the daily cap ${CAP_FIELD} = ${cap.tokens} an admin set for space '${spaceId}' in place of ${setting} (a writer may only lower it)`;
    case 'lowered':
      return `the daily cap ${CAP_FIELD} = ${cap.tokens} a writer set for space '${spaceId}', below ${
        cap.ceiling === cap.setting && cap.ceiling !== 0 ? setting : cap.ceiling === 0 ? 'no cap' : `${cap.ceiling} (an admin's)`
      } (\`live-mem space update ${spaceId} --llm-daily-tokens N\` changes it: a writer up to that, an admin to any value)`;
  }
}

/** What `space_info`, `live-mem spend` and `space_update` say of the cap: null when there is none and nobody set one. */
export function capReport(cap: SpendCap, spaceId: string) {
  if (cap.tokens === 0 && cap.source === 'setting') return null;
  return {
    tokens: cap.tokens,
    set_by:
      cap.source === 'setting' ? CAP_SETTING : cap.source === 'admin' ? `${CAP_FIELD} (an admin, for this space)` : `${CAP_FIELD} (a writer, for this space)`,
    why: describeCap(cap, spaceId),
    ...(cap.tokens > 0 ? { search_tokens: cap.search } : {}),
  };
}

/**
 * The meta's cap fields once `caller` asks for `tokens` (0 = no cap): an admin's value is the cap
 * from now on (the lowered one goes); a writer's may only lower what is in force above the space,
 * else `forbidden`, with the cap and who may change it. Called inside the meta's compare-and-swap,
 * on the meta as it is.
 */
export function capUpdate(caller: Caller, meta: Record<string, unknown>, tokens: number, limits: Pick<Limits, 'llmDailyTokens' | 'llmSearchShare'>) {
  const { [CAP_FIELD]: _legacy, [LOWERED_CAP_FIELD]: _lowered, ...rest } = meta;
  if (caller.permissions.has('admin')) return { ...rest, [ADMIN_CAP_FIELD]: tokens };
  const cap = capInForce(meta, limits);
  if (cap.ceiling !== 0 && (tokens === 0 || tokens > cap.ceiling)) {
    throw new LiveMemError(
      'forbidden',
      `${CAP_FIELD} = ${tokens} refused: a writer may only lower a space's daily cap, and ${
        cap.source === 'admin' || (cap.source === 'lowered' && cap.ceiling !== cap.setting) ? `an admin set ${cap.ceiling}` : `${CAP_SETTING} = ${cap.ceiling}`
      } is in force above space '${String(meta.space_id)}': give a value from 1 to ${cap.ceiling}, or ask an admin to raise or clear it. Nothing was changed`,
      { cap: cap.tokens, ceiling: cap.ceiling, requested: tokens },
    );
  }
  return tokens === 0 ? rest : { ...rest, [LOWERED_CAP_FIELD]: tokens };
}
