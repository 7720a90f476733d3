/**
 * The viewer's change stream: `GET /api/spaces/{id}/changes`, server-sent events fed by the core's
 * change feed (core/feed/), so the live page learns of a note or a commit made by any process or
 * host when the store shows it, and reads it through the tools as before. The events say what changed
 * (note names, commit ids, bank files), never a note's text; the caller must be allowed to read the
 * space. While a stream is open its space is watched; it stops being watched when the page leaves.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize, type Caller } from '../core/caller.js';
import type { Admitted } from '../http/listen.js';
import type { Core } from '../core/core.js';
import { validateSpaceId } from '../core/validate.js';
import { isLiveMemError } from '../shared/errors.js';
import { SECURITY_HEADERS, sendJson } from './headers.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 25_000;

export const CHANGES_PATH = /^\/api\/spaces\/([^/]+)\/changes$/;

/** Why a stream request is refused (its status and answer), or the space it may follow. */
function refusal(
  req: IncomingMessage,
  rawSpaceId: string,
  caller: Caller | undefined,
): { status: number; body: unknown; headers?: Record<string, string> } | string {
  if (req.method !== 'GET') return { status: 405, body: { status: 'error', message: 'GET only' }, headers: { allow: 'GET' } };
  if (caller === undefined) {
    const body = { status: 'error', message: 'a token is needed: send it as Authorization: Bearer <token>' };
    return { status: 401, body, headers: { 'www-authenticate': 'Bearer realm="live-mem"' } };
  }
  try {
    const spaceId = validateSpaceId(decodeURIComponent(rawSpaceId));
    authorize(caller, 'read', spaceId);
    return spaceId;
  } catch (error) {
    const forbidden = isLiveMemError(error, 'forbidden');
    return { status: forbidden ? 403 : 400, body: { status: forbidden ? 'forbidden' : 'error', message: (error as Error).message } };
  }
}

/** Streams a space's changes; once open, the stream no longer holds one of its caller's calls in flight (`answered`). */
export function streamChanges(core: Core, req: IncomingMessage, res: ServerResponse, rawSpaceId: string, admitted: Admitted<Caller>): void {
  const checked = refusal(req, rawSpaceId, admitted.caller);
  if (typeof checked !== 'string') {
    sendJson(res, checked.status, checked.body, checked.headers);
    return;
  }
  const spaceId = checked;
  admitted.answered();
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  const write = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  const subscription = core.feed.subscribe([spaceId], (event) => write(event.type, event));
  // Told once the baseline is taken: every change after it will be streamed.
  void subscription.ready.then(() => write('ready', { space_id: spaceId }));
  const heartbeat = setInterval(() => res.write(': still here\n\n'), HEARTBEAT_MS).unref();
  res.once('close', () => {
    clearInterval(heartbeat);
    subscription.unsubscribe();
  });
}
