import type { IncomingMessage } from 'node:http';

/**
 * What a request says of where it came from and what it reached, read through a reverse proxy
 * only when the server was told to trust one (`--trust-proxy`): a client talking to the server
 * directly could otherwise name any host or address it likes.
 */

/** The first or last value of a header a proxy sent (a list, comma-separated or repeated). */
export function forwarded(req: IncomingMessage, name: string, which: 'first' | 'last'): string | undefined {
  const raw = req.headers[name];
  const values = (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return which === 'first' ? values[0] : values[values.length - 1];
}

/** The host the client reached: behind a trusted proxy its X-Forwarded-Host, else the Host header. */
export const requestHost = (req: IncomingMessage, trustProxy: boolean): string =>
  (trustProxy ? forwarded(req, 'x-forwarded-host', 'first') : undefined) ?? String(req.headers.host ?? '');

/**
 * The origin the client reached (`https://memory.example.com`): its host (checked against the
 * allowed ones by the front door before any handler runs) and, behind a trusted proxy, the
 * proxy's X-Forwarded-Proto.
 */
export function publicOrigin(req: IncomingMessage, trustProxy: boolean): string {
  const proto = (trustProxy ? forwarded(req, 'x-forwarded-proto', 'first') : undefined)?.toLowerCase() === 'https' ? 'https' : 'http';
  return `${proto}://${requestHost(req, trustProxy)}`;
}
