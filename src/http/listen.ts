import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { isLiveMemError, LiveMemError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import {
  type Admission,
  addressKey,
  createCallerLimiter,
  createConnectionTable,
  DEFAULT_HTTP_LIMITS,
  HEADERS_TIMEOUT_MS,
  type HttpLimits,
  KEEP_ALIVE_ADVERTISED_S,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  type Refusal,
  tokenKey,
} from './limits.js';
import { forwarded, requestHost } from './forwarded.js';

/** Query parameters that would carry a credential in a URL (logged by every proxy on the way): refused. */
const CREDENTIAL_PARAMS = ['token', 'access_token', 'api_key', 'apikey', 'key', 'auth', 'authorization', 'secret'];
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether a bind address only answers this machine. */
export const isLoopback = (host: string): boolean => LOOPBACK.has(host);
/** Bind addresses that listen on every interface of the machine (what a URL can never name). */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]', '']);

/** Who may be reached through which names; see `hostPolicy`. */
export interface NetworkOptions {
  /** Names (`memory.example.com`: any port) and `name:port` accepted in Host and Origin besides the bind address; `*`: any. */
  allowedHosts?: readonly string[];
  /** Take X-Forwarded-Host/-For from the reverse proxy in front (and only then): for the Host check and each caller's share. */
  trustProxy?: boolean;
  /** LIVE_MEM_AUTH=required: no token, no access. */
  authRequired?: boolean;
}

/**
 * Which Host headers a server bound to `host` accepts. On loopback: its own address and the loopback
 * names, plus `allowedHosts` — a DNS name rebound to 127.0.0.1 is refused, and no token is needed to
 * harm a local owner. Off loopback the server is meant to be reached by names and proxies it cannot
 * know, so it needs LIVE_MEM_AUTH=required and then accepts any Host unless `allowedHosts` narrows
 * it: every request needs a bearer token, which a rebinding web page does not have. `*` says "any
 * Host" explicitly, so it too needs auth required. Refusals are config errors: the server does not start.
 */
export function hostPolicy(host: string, options: NetworkOptions): { anyHost: boolean; allowed: readonly string[] } {
  const allowed = (options.allowedHosts ?? []).map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
  const wildcard = allowed.includes('*');
  if (wildcard && !options.authRequired)
    throw new LiveMemError(
      'config_error',
      '--allowed-hosts (LIVE_MEM_ALLOWED_HOSTS) * accepts any Host header, so only the token protects the server: set LIVE_MEM_AUTH=required, or list the names clients use',
    );
  if (!isLoopback(host) && !options.authRequired)
    throw new LiveMemError(
      'config_error',
      `binding ${host} serves other machines: set LIVE_MEM_AUTH=required (every request then needs a token), or bind 127.0.0.1`,
    );
  return { anyHost: wildcard || (!isLoopback(host) && allowed.length === 0), allowed };
}

/** `name:port` of a Host header or an Origin's host, lowercase, IPv6 in brackets; port '' when absent. */
function splitHost(value: string): { name: string; port: string } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(value.toLowerCase());
  return match ? { name: match[1] as string, port: match[2] ?? '' } : { name: value.toLowerCase(), port: '' };
}

/**
 * The URLs a client can use to reach a server bound to `host`: for a wildcard bind, loopback and
 * each address of this machine's interfaces (never 0.0.0.0, which names no machine).
 */
export function reachableOrigins(host: string, port: number): string[] {
  const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address);
  if (!WILDCARD.has(host)) return [`http://${bracket(host.replace(/^\[|\]$/g, ''))}:${port}`];
  const ipv6 = host !== '0.0.0.0';
  const addresses = ['127.0.0.1', ...(ipv6 ? ['::1'] : [])];
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      // Link-local IPv6 addresses need a zone (%eth0) that a URL cannot carry.
      if (entry.internal || (entry.family === 'IPv6' && (!ipv6 || entry.scopeid !== 0))) continue;
      if (!addresses.includes(entry.address)) addresses.push(entry.address);
    }
  }
  return addresses.map((address) => `http://${bracket(address)}:${port}`);
}

/** How a server answers a request it refuses; each server has its own error shape (JSON-RPC for /mcp, the tool error for the viewer). */
export type Refuse = (res: ServerResponse, url: URL, status: number, message: string, headers?: Record<string, string>) => void;

/**
 * What the front door hands a handler with each request it let through. `C` is whatever the
 * server's `authenticate` makes of a token (the core's Caller): the front door only carries it.
 */
export interface Admitted<C> {
  /** Who the request's bearer token stands for; undefined when it carries none (the handler decides whether it needs one). */
  caller: C | undefined;
  /** Counts `calls` more against the request's share — the other calls of a JSON-RPC batch; a refusal counts nothing. */
  charge(calls: number): Refusal | undefined;
  /**
   * The request is answered and what stays open is a stream (the viewer's change stream): it no longer
   * counts in flight against its caller, only as a connection (maxConnections). Idempotent.
   */
  answered(): void;
}

/** The part of a server a front door serves: who a token stands for, the handler, its error shape. */
export interface Handler<C> {
  /** Who a bearer token stands for, on any path; throws `forbidden` for an unknown, revoked or expired one. */
  authenticate(token: string, url: URL): Promise<C>;
  /** Serves a request that passed the front door's checks. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, admitted: Admitted<C>): Promise<void>;
  refuse: Refuse;
}

export interface ListenOptions<C> extends NetworkOptions, Handler<C> {
  host: string;
  port: number;
  logger: Logger;
  /** Default: DEFAULT_HTTP_LIMITS (the settings' defaults). */
  limits?: HttpLimits;
}

/**
 * The one HTTP front door of live-mem (MCP at /mcp, the web viewer): before any handler runs, a
 * credential in the query string is refused (400: it would end up in logs and browser history),
 * and a `Host` or `Origin` that is not the server's own is refused (403), so a web page on another
 * origin — or a DNS name rebound to 127.0.0.1 — cannot talk to a server on this machine. Then each
 * caller is held to its share (429 past it, see limits.ts): a token once it has authenticated
 * here, its address until then (so made-up tokens share one address's share, and too many failures
 * lock the address's unknown tokens out), and a bearer token is authenticated (403 if it is not
 * one), here and only here. Connections are capped, and those that no token proved give way to the
 * others (createConnectionTable); those that send nothing, or too slowly, are closed.
 * `Expect: 100-continue` is answered once the request is admitted and its token authenticated.
 * Which Hosts are accepted: `hostPolicy`. With `trustProxy`, the proxy's X-Forwarded-Host stands for
 * the Host and the last X-Forwarded-For address (the one the proxy added) for the caller's address.
 */
export async function listenGuarded<C>(options: ListenOptions<C>): Promise<{ origin: string; origins: string[]; close(): Promise<void> }> {
  const policy = hostPolicy(options.host, options);
  /** `name:port` of the bind address (and of the loopback names on loopback), set once the port is known. */
  const own = new Set<string>();
  const hostAllowed = (value: string): boolean => {
    if (policy.anyHost || own.has(value.toLowerCase())) return true;
    const { name, port } = splitHost(value);
    return policy.allowed.some((entry) => entry === name || entry === `${name}:${port}`);
  };

  const guard = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (CREDENTIAL_PARAMS.some((name) => url.searchParams.has(name))) {
      options.refuse(res, url, 400, 'credentials in the query string are refused: send them as Authorization: Bearer <token>');
      return false;
    }
    const host = requestHost(req, options.trustProxy === true);
    if (!hostAllowed(host)) {
      options.refuse(res, url, 403, 'forbidden Host header (DNS rebinding protection; see --allowed-hosts)');
      return false;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !(/^https?:\/\/[^/]+$/i.test(origin) && hostAllowed(new URL(origin).host))) {
      options.refuse(res, url, 403, 'forbidden Origin header (DNS rebinding protection; see --allowed-hosts)');
      return false;
    }
    return true;
  };
  const addressOf = (req: IncomingMessage): string | undefined =>
    (options.trustProxy ? forwarded(req, 'x-forwarded-for', 'last') : undefined) ?? req.socket.remoteAddress;
  /** 429 with Retry-After for what can succeed later; 400 for what never can as sent. */
  const refuseFor = (res: ServerResponse, url: URL, refusal: Refusal) =>
    refusal.retryAfterS === undefined
      ? options.refuse(res, url, 400, refusal.message)
      : options.refuse(res, url, 429, refusal.message, { 'retry-after': String(refusal.retryAfterS) });

  const limits = options.limits ?? DEFAULT_HTTP_LIMITS;
  const limiter = createCallerLimiter(limits);
  const connections = createConnectionTable<Socket>(limits.maxConnections);
  /** A connection that has not yet sent a request; Node's own timeouts start with its first byte. */
  const silent = new WeakMap<Socket, NodeJS.Timeout>();

  const http = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval: 5_000 },
    (req, res) => serve(req, res, false),
  );
  // The client waits for "100 Continue" before its body: it gets it once admitted and authenticated (see `pass`).
  http.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => serve(req, res, true));
  http.on('connection', (socket: Socket) => {
    if (!connections.add(socket, socket.remoteAddress)) {
      socket.destroy();
      return;
    }
    const timer = setTimeout(() => socket.destroy(), HEADERS_TIMEOUT_MS).unref();
    silent.set(socket, timer);
    socket.once('close', () => {
      clearTimeout(timer);
      connections.remove(socket);
    });
  });

  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    const { socket } = req;
    clearTimeout(silent.get(socket));
    // Node would advertise the keepAliveTimeout it closes at, and nothing when a handler sets
    // Connection itself (the SDK's event streams do): every answer says the shorter time instead.
    if (res.shouldKeepAlive) res.setHeader('keep-alive', `timeout=${KEEP_ALIVE_ADVERTISED_S}`);
    connections.busy(socket, 1);
    res.once('close', () => connections.busy(socket, -1));
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!guard(req, res, url)) return;
    const bearer = bearerOf(req);
    const address = addressOf(req);
    const key = bearer === undefined ? undefined : tokenKey(bearer);
    const known = key !== undefined && limiter.isKnown(key);
    if (key !== undefined && !known) {
      // Refused before any lookup: this address has presented too many tokens that were not ones.
      const locked = limiter.locked(address);
      if (locked) return refuseFor(res, url, locked);
    }
    // Taken before anything is awaited: requests arriving together are counted together.
    const admission = limiter.admit(known ? key : addressKey(address));
    if (!admission.admitted) return refuseFor(res, url, admission);
    res.once('close', admission.release);
    pass(req, res, url, { bearer, key, address, admission, expectsContinue }).catch((error: unknown) => {
      options.logger.error('HTTP request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) options.refuse(res, url, 500, 'internal error');
      else res.end();
    });
  };
  /** Authenticates the request's token, if it has one, and hands the request to the handler. */
  const pass = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    request: { bearer: string | undefined; key: string | undefined; address: string | undefined; admission: Admission; expectsContinue: boolean },
  ): Promise<void> => {
    const { bearer, key, address, admission } = request;
    let caller: C | undefined;
    if (bearer !== undefined && key !== undefined) {
      try {
        caller = await options.authenticate(bearer, url);
      } catch (error) {
        if (!isLiveMemError(error, 'forbidden')) throw error;
        limiter.failed(address, key);
        return options.refuse(res, url, 403, 'forbidden: this token is unknown, revoked or expired', { 'www-authenticate': 'Bearer error="invalid_token"' });
      }
      limiter.authenticated(key);
      connections.prove(req.socket);
      const moved = admission.moveTo(key);
      if (moved) return refuseFor(res, url, moved);
    }
    if (request.expectsContinue) res.writeContinue();
    await options.handle(req, res, url, { caller, charge: admission.charge, answered: admission.release });
  };
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const origins = reachableOrigins(options.host, port);
  for (const origin of origins) own.add(new URL(origin).host);
  if (isLoopback(options.host)) for (const host of LOOPBACK) own.add(`${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`);
  return {
    origin: origins[0] as string,
    origins,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** The token of an `Authorization: Bearer …` header, if any. */
export function bearerOf(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''))?.[1];
}
