import { createHash } from 'node:crypto';

/** What one HTTP server lets its clients hold (README, "Security": limits). */
export interface HttpLimits {
  /** Open connections at once; past it, a new connection is closed as soon as it is accepted. */
  maxConnections: number;
  /** Requests in flight at once per caller (a token, or an address for requests without one). */
  maxInFlight: number;
  /** Requests per minute per caller, as a bucket of that many refilled continuously; 0 = no rate limit. */
  ratePerMinute: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { maxConnections: 256, maxInFlight: 8, ratePerMinute: 600 };

/**
 * Slow and idle clients. A connection must send its first request's headers within HEADERS_TIMEOUT_MS
 * and a whole request (a body of at most 4 MB) within REQUEST_TIMEOUT_MS; an idle keep-alive
 * connection is closed after KEEP_ALIVE_TIMEOUT_MS. None bounds an answer: a long tool call streams
 * its result (and progress) for as long as it runs.
 */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 60_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export type Admission = { admitted: true; release(): void } | { admitted: false; retryAfterS: number; message: string };

/**
 * Whom a request counts against: its bearer token, by hash (the token itself is kept nowhere), or,
 * without one, the address it comes from.
 */
export function callerKey(address: string | undefined, bearer: string | undefined): string {
  if (bearer !== undefined) return `token:${createHash('sha256').update(bearer).digest('hex').slice(0, 32)}`;
  return `address:${address ?? 'unknown'}`;
}

interface CallerState {
  inFlight: number;
  /** Requests left in the bucket, as of `at`. */
  tokens: number;
  at: number;
}

/**
 * Per-caller concurrency and rate, for one server. A refused request costs nothing from the
 * bucket. Callers with nothing in flight and a full bucket are forgotten, so rotating tokens cannot
 * grow the table without bound.
 */
export function createCallerLimiter(limits: HttpLimits, now: () => number = Date.now) {
  const callers = new Map<string, CallerState>();
  const perMs = limits.ratePerMinute / 60_000;
  let sweepAt = 1_024;

  const refill = (state: CallerState, time: number) => {
    if (limits.ratePerMinute === 0) return;
    state.tokens = Math.min(limits.ratePerMinute, state.tokens + (time - state.at) * perMs);
    state.at = time;
  };
  const forgetIdle = (time: number) => {
    for (const [key, state] of callers) {
      refill(state, time);
      if (state.inFlight === 0 && (limits.ratePerMinute === 0 || state.tokens >= limits.ratePerMinute)) callers.delete(key);
    }
    sweepAt = Math.max(1_024, callers.size * 2);
  };

  return {
    /** How many callers the table remembers. */
    tracked: (): number => callers.size,
    admit(key: string): Admission {
      const time = now();
      if (callers.size >= sweepAt) forgetIdle(time);
      let state = callers.get(key);
      if (!state) {
        state = { inFlight: 0, tokens: limits.ratePerMinute, at: time };
        callers.set(key, state);
      }
      refill(state, time);
      if (state.inFlight >= limits.maxInFlight) {
        return { admitted: false, retryAfterS: 1, message: `too many requests: at most ${limits.maxInFlight} at once per token; retry when one has answered` };
      }
      if (limits.ratePerMinute > 0 && state.tokens < 1) {
        return {
          admitted: false,
          retryAfterS: Math.max(1, Math.ceil((1 - state.tokens) / perMs / 1000)),
          message: `too many requests: at most ${limits.ratePerMinute} a minute per token`,
        };
      }
      if (limits.ratePerMinute > 0) state.tokens -= 1;
      state.inFlight += 1;
      const held = state;
      let released = false;
      return {
        admitted: true,
        release: () => {
          if (released) return;
          released = true;
          held.inFlight -= 1;
        },
      };
    },
  };
}
