import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../shared/log.js';
import {
  callerKey,
  createCallerLimiter,
  DEFAULT_HTTP_LIMITS,
  HEADERS_TIMEOUT_MS,
  type HttpLimits,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
} from './http-limits.js';

/** Query parameters that would carry a credential in a URL (logged by every proxy on the way): refused. */
const CREDENTIAL_PARAMS = ['token', 'access_token', 'api_key', 'apikey', 'key', 'auth', 'authorization', 'secret'];
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether a bind address only answers this machine. */
export const isLoopback = (host: string): boolean => LOOPBACK.has(host);

/** How a server answers a request it refuses; each server has its own error shape (JSON-RPC for /mcp, the tool error for the viewer). */
export type Refuse = (res: ServerResponse, url: URL, status: number, message: string, headers?: Record<string, string>) => void;

export interface ListenOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Default: DEFAULT_HTTP_LIMITS (the settings' defaults). */
  limits?: HttpLimits;
  /** Serves a request that passed the checks below. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  refuse: Refuse;
}

/**
 * The one HTTP front door of live-mem (MCP at /mcp, the web viewer): before any handler runs, a
 * credential in the query string is refused (400: it would end up in logs and browser history),
 * and a `Host` or `Origin` that is not the server's own is refused (403), so a web page on another
 * origin — or a DNS name rebound to 127.0.0.1 — cannot talk to a server on this machine. Then each
 * caller (token, or address without one) is held to its share (429 past it, see http-limits.ts),
 * and the server to a number of connections, closing those that send nothing or too slowly.
 */
export async function listenGuarded(options: ListenOptions): Promise<{ origin: string; close(): Promise<void> }> {
  const allowedHosts = new Set<string>();
  const allowedOrigins = new Set<string>();
  const remember = (host: string, port: number) => {
    const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    allowedHosts.add(`${name}:${port}`);
    allowedOrigins.add(`http://${name}:${port}`);
    allowedOrigins.add(`https://${name}:${port}`);
  };

  const guard = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (CREDENTIAL_PARAMS.some((name) => url.searchParams.has(name))) {
      options.refuse(res, url, 400, 'credentials in the query string are refused: send them as Authorization: Bearer <token>');
      return false;
    }
    if (!allowedHosts.has(String(req.headers.host ?? '').toLowerCase())) {
      options.refuse(res, url, 403, 'forbidden Host header (DNS rebinding protection)');
      return false;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      options.refuse(res, url, 403, 'forbidden Origin header (DNS rebinding protection)');
      return false;
    }
    return true;
  };

  const limits = options.limits ?? DEFAULT_HTTP_LIMITS;
  const limiter = createCallerLimiter(limits);
  /** A connection that has not yet sent a request; Node's own timeouts start with its first byte. */
  const silent = new WeakMap<Socket, NodeJS.Timeout>();

  const http = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval: 5_000 },
    (req, res) => serve(req, res),
  );
  http.maxConnections = limits.maxConnections;
  http.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), HEADERS_TIMEOUT_MS).unref();
    silent.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    clearTimeout(silent.get(req.socket));
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!guard(req, res, url)) return;
    // Taken before the handler reads anything (synchronously: a client told "100 Continue" holds its place).
    const admission = limiter.admit(callerKey(req, bearerOf(req)));
    if (!admission.admitted) return options.refuse(res, url, 429, admission.message, { 'retry-after': String(admission.retryAfterS) });
    res.once('close', admission.release);
    options.handle(req, res, url).catch((error: unknown) => {
      options.logger.error('HTTP request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) options.refuse(res, url, 500, 'internal error');
      else res.end();
    });
  };
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  remember(options.host, port);
  if (isLoopback(options.host)) for (const host of LOOPBACK) remember(host, port);
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    origin: `http://${shown}:${port}`,
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
