import { createHash } from 'node:crypto';

/** What one HTTP server lets its clients hold (docs/security.md, "Limits"). */
export interface HttpLimits {
  /** Open connections at once (see createConnectionTable for who gives way past it). */
  maxConnections: number;
  /** Calls in flight at once per caller (a token, or an address for requests without one); each call of a batch counts. */
  maxInFlight: number;
  /** Calls per minute per caller, as a bucket of that many refilled continuously; each call of a batch counts; 0 = no rate limit. */
  ratePerMinute: number;
  /** Failed authentications per minute per address, a bucket like the rate's; past it, 429 to the address's unknown tokens; 0 = no limit. */
  authFailuresPerMinute: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { maxConnections: 256, maxInFlight: 8, ratePerMinute: 600, authFailuresPerMinute: 20 };

/**
 * Slow and idle clients. A connection must send its first request's headers within HEADERS_TIMEOUT_MS
 * and a whole request (a body of at most 4 MB) within REQUEST_TIMEOUT_MS; an idle keep-alive
 * connection is closed after KEEP_ALIVE_TIMEOUT_MS. None bounds an answer: a long tool call streams
 * its result (and progress) for as long as it runs.
 */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 60_000;
/**
 * What every answer advertises (`Keep-Alive: timeout=5`): how long a client may leave a connection
 * idle and still send on it. The server keeps it open twice as long, KEEP_ALIVE_TIMEOUT_MS: a
 * client that reuses a socket just before the advertised time (Node's http.Agent reuses it until
 * then; undici until 2 s before) sends its request on a socket still open even when one of the two
 * processes was descheduled for seconds. A server that closed at the advertised time would race
 * such a request, and a POST on a socket closed under it fails (`fetch failed`) without a retry.
 */
export const KEEP_ALIVE_ADVERTISED_S = 5;
/** How long the server keeps an idle connection: past what it advertises (see above), below HEADERS_TIMEOUT_MS. */
export const KEEP_ALIVE_TIMEOUT_MS = 2 * KEEP_ALIVE_ADVERTISED_S * 1_000;

/** Why a request is refused: 429 with Retry-After when it can succeed later; without `retryAfterS`, never as sent (400). */
export interface Refusal {
  retryAfterS?: number;
  message: string;
}

export interface Admission {
  /** Counts `calls` more against the same share (the other calls of a batch); a refusal counts nothing, not even the request's own call. */
  charge(calls: number): Refusal | undefined;
  /** Moves what the request holds to `key`'s share (a token counted against its address until it authenticated); a refusal moves nothing. */
  moveTo(key: string): Refusal | undefined;
  release(): void;
}

/** Whom a request with this bearer token counts against once the token is known: its hash (the token itself is kept nowhere). */
export const tokenKey = (bearer: string): string => `token:${createHash('sha256').update(bearer).digest('hex').slice(0, 32)}`;
/** Whom a request counts against until it carries a token this server has authenticated. */
export const addressKey = (address: string | undefined): string => `address:${address ?? 'unknown'}`;

interface Bucket {
  /** What is left, as of `at`. */
  tokens: number;
  at: number;
}
interface Share extends Bucket {
  inFlight: number;
}

/** Refills a bucket of `perMinute` continuously up to `perMinute`; 0 = no bucket. */
function refill(bucket: Bucket, perMinute: number, time: number): void {
  if (perMinute === 0) return;
  bucket.tokens = Math.min(perMinute, bucket.tokens + ((time - bucket.at) * perMinute) / 60_000);
  bucket.at = time;
}
/** Seconds until a bucket holds `wanted`. */
const secondsUntil = (bucket: Bucket, perMinute: number, wanted: number): number =>
  Math.max(1, Math.ceil(((wanted - bucket.tokens) * 60_000) / perMinute / 1000));

/**
 * Per-caller concurrency and rate, and per-address failed authentications, for one server. What is
 * counted is calls: a request is one, a JSON-RPC batch as many as it holds (`charge`). A refused
 * request costs nothing from its bucket. A request counts against its address until its token has
 * authenticated once on this server (then against the token): random tokens share their address's
 * share, and each that fails to authenticate also takes one from the address's failure bucket; once
 * that is empty, the address's tokens that never authenticated are refused before any lookup, while
 * the tokens that did keep being served (`locked`). Callers with nothing in flight and full buckets
 * are forgotten, so rotating tokens or addresses cannot grow the tables without bound.
 */
export function createCallerLimiter(limits: HttpLimits, now: () => number = Date.now) {
  const { maxInFlight, ratePerMinute, authFailuresPerMinute } = limits;
  const shares = new Map<string, Share>();
  const failures = new Map<string, Bucket>();
  /** Keys of tokens that authenticated: only real tokens get here, so it is bounded by the token store. */
  const known = new Set<string>();
  let sweepAt = 1_024;

  const forgetIdle = (time: number) => {
    for (const [key, share] of shares) {
      refill(share, ratePerMinute, time);
      if (share.inFlight === 0 && (ratePerMinute === 0 || share.tokens >= ratePerMinute)) shares.delete(key);
    }
    for (const [address, bucket] of failures) {
      refill(bucket, authFailuresPerMinute, time);
      if (bucket.tokens >= authFailuresPerMinute) failures.delete(address);
    }
    sweepAt = Math.max(1_024, (shares.size + failures.size) * 2);
  };
  const shareOf = (key: string, time: number): Share => {
    if (shares.size + failures.size >= sweepAt) forgetIdle(time);
    let share = shares.get(key);
    if (!share) {
      share = { inFlight: 0, tokens: ratePerMinute, at: time };
      shares.set(key, share);
    }
    refill(share, ratePerMinute, time);
    return share;
  };

  /** Takes `calls` from a share, all or nothing; `total` is the request's whole count, to tell "later" from "never". */
  const take = (share: Share, calls: number, total: number): Refusal | undefined => {
    if (total > maxInFlight)
      return { message: `a batch of ${total} calls is more than the ${maxInFlight} a token may have in flight at once: send at most ${maxInFlight} per batch` };
    if (ratePerMinute > 0 && total > ratePerMinute)
      return { message: `a batch of ${total} calls is more than the ${ratePerMinute} a token may make a minute: send at most ${ratePerMinute} per batch` };
    if (share.inFlight + calls > maxInFlight)
      return {
        retryAfterS: 1,
        message: `too many requests: at most ${maxInFlight} at once per token (each call of a batch counts); retry when one has answered`,
      };
    if (ratePerMinute > 0 && share.tokens < calls)
      return {
        retryAfterS: secondsUntil(share, ratePerMinute, calls),
        message: `too many requests: at most ${ratePerMinute} a minute per token (each call of a batch counts)`,
      };
    if (ratePerMinute > 0) share.tokens -= calls;
    share.inFlight += calls;
    return undefined;
  };
  /** Gives back what a share holds for a request; `refund` also returns its calls to the bucket (the request was refused). */
  const give = (share: Share, calls: number, refund: boolean) => {
    share.inFlight -= calls;
    if (refund && ratePerMinute > 0) share.tokens = Math.min(ratePerMinute, share.tokens + calls);
  };

  return {
    /** How many callers and addresses the tables remember. */
    tracked: (): number => shares.size + failures.size,

    /** Whether a token's key has authenticated on this server (and not failed since). */
    isKnown: (key: string): boolean => known.has(key),

    /** A token authenticated: from now on its requests count against itself, and an address's lock does not hold it. */
    authenticated(key: string): void {
      known.add(key);
    },

    /** A request from `address` presented a token that is unknown, revoked or expired. */
    failed(address: string | undefined, key: string): void {
      known.delete(key);
      if (authFailuresPerMinute === 0) return;
      const time = now();
      const id = addressKey(address);
      let bucket = failures.get(id);
      if (!bucket) {
        bucket = { tokens: authFailuresPerMinute, at: time };
        failures.set(id, bucket);
      }
      refill(bucket, authFailuresPerMinute, time);
      bucket.tokens = Math.max(0, bucket.tokens - 1);
    },

    /** Why `address` may not present a token that has not authenticated here: it failed too often of late. */
    locked(address: string | undefined): Refusal | undefined {
      const bucket = failures.get(addressKey(address));
      if (!bucket || authFailuresPerMinute === 0) return undefined;
      refill(bucket, authFailuresPerMinute, now());
      if (bucket.tokens >= 1) return undefined;
      return {
        retryAfterS: secondsUntil(bucket, authFailuresPerMinute, 1),
        message: `too many failed authentications from this address: at most ${authFailuresPerMinute} a minute`,
      };
    },

    /** One call, taken synchronously when a request's headers arrive (before its body is read). */
    admit(key: string): ({ admitted: true } & Admission) | ({ admitted: false } & Required<Refusal>) {
      let owner = key;
      let share = shareOf(owner, now());
      const refused = take(share, 1, 1);
      if (refused) return { admitted: false, retryAfterS: refused.retryAfterS ?? 1, message: refused.message };
      let held = 1;
      let released = false;
      /** A refused charge or move gives back what the request held, refunded: a refused request costs nothing. */
      const refuse = (refusal: Refusal): Refusal => {
        give(share, held, true);
        held = 0;
        return refusal;
      };
      return {
        admitted: true,
        charge(calls) {
          if (released || calls <= 0) return undefined;
          refill(share, ratePerMinute, now());
          const refusal = take(share, calls, held + calls);
          if (refusal) return refuse(refusal);
          held += calls;
          return undefined;
        },
        moveTo(other) {
          if (released || other === owner) return undefined;
          const target = shareOf(other, now());
          const refusal = take(target, held, held);
          if (refusal) return refuse(refusal);
          give(share, held, true);
          share = target;
          owner = other;
          return undefined;
        },
        release() {
          if (released) return;
          released = true;
          give(share, held, false);
        },
      };
    },
  };
}

/**
 * Who holds the server's connections. A connection is *proven* once a request on it has
 * authenticated (a token, the viewer's secret); until then anyone may hold it, and a client that
 * opens sockets faster than the timeouts close them could otherwise take every place and lock the
 * token holders out. So at `maxConnections`, room for a newcomer is made by closing a connection
 * no token has proved and that is not serving a request: the oldest one of the address holding the
 * most such connections (one client's hundreds of sockets give way before anyone else's). A proven
 * connection is never closed to make room, and nothing is closed below the cap; a newcomer is
 * refused only when nothing can be closed. (An address is the socket's: behind a reverse proxy
 * every connection is the proxy's, and its connections are proven by the requests they carry.)
 */
export function createConnectionTable<S extends { destroy(): void }>(maxConnections: number) {
  const open = new Map<S, { address: string; proven: boolean; busy: number }>();
  /** Connections not proven, per address, oldest first. */
  const unproven = new Map<string, Set<S>>();

  const unlist = (socket: S) => {
    const entry = open.get(socket);
    if (!entry || entry.proven) return;
    const mine = unproven.get(entry.address);
    mine?.delete(socket);
    if (mine?.size === 0) unproven.delete(entry.address);
  };
  const remove = (socket: S) => {
    unlist(socket);
    open.delete(socket);
  };
  const oldestIdle = (mine: Set<S>): S | undefined => {
    for (const socket of mine) if ((open.get(socket)?.busy ?? 0) === 0) return socket;
    return undefined;
  };
  /** Closes the oldest idle connection not proven of the address holding the most; false if there is none. */
  const makeRoom = (): boolean => {
    let victim: S | undefined;
    let most = 0;
    for (const mine of unproven.values()) {
      if (mine.size <= most) continue;
      const oldest = oldestIdle(mine);
      if (oldest === undefined) continue;
      victim = oldest;
      most = mine.size;
    }
    if (victim === undefined) return false;
    remove(victim);
    victim.destroy();
    return true;
  };

  return {
    /** How many connections are open, and how many of them no token has proved. */
    counts: () => ({ open: open.size, unproven: [...unproven.values()].reduce((sum, mine) => sum + mine.size, 0) }),
    /** A new connection: true if it may stay (another may have been closed for it); false: close it. */
    add(socket: S, address: string | undefined): boolean {
      if (open.size >= maxConnections && !makeRoom()) return false;
      const id = address ?? 'unknown';
      open.set(socket, { address: id, proven: false, busy: 0 });
      unproven.set(id, (unproven.get(id) ?? new Set()).add(socket));
      return true;
    },
    remove,
    /** A request on the connection started (+1) or was answered (-1): a connection serving one is never closed to make room. */
    busy(socket: S, delta: 1 | -1): void {
      const entry = open.get(socket);
      if (entry) entry.busy += delta;
    },
    /** A request on the connection authenticated: it keeps its place whoever comes. */
    prove(socket: S): void {
      const entry = open.get(socket);
      if (!entry || entry.proven) return;
      unlist(socket);
      entry.proven = true;
    },
  };
}
