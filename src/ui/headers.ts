import type { ServerResponse } from 'node:http';

/**
 * Sent with every response of the viewer, errors included. Everything the page shows comes from
 * the store, written by agents and an LLM: untrusted. The policy allows only the viewer's own
 * script and style (no inline script, no eval, no CDN), images from itself or data: URLs, requests
 * to itself; no plugin, no frame around it, no <base>, no form posting elsewhere. So even markup
 * that slipped through rendering could neither run nor send anything away.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Writes a whole response with the security headers. */
export function send(res: ServerResponse, status: number, headers: Record<string, string>, body?: Buffer | string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

/** A JSON answer that no cache keeps (it may hold a space's content). */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers }, JSON.stringify(value));
}
