import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { Handler, Refuse } from '../http/listen.js';
import type { Logger } from '../shared/log.js';
import { type LocalSession, runToolRequest, viewerCaller } from './api.js';
import type { UiAssets } from './assets.js';
import { CHANGES_PATH, streamChanges } from './changes.js';
import { send, sendJson } from './headers.js';

export interface UiHandlerOptions {
  core: Core;
  logger: Logger;
  assets: UiAssets;
  version: string;
  /**
   * The caller of a request bearing this session's secret: only `live-mem ui` on a loopback address
   * with auth not required has one (the process's own caller, as the CLI's). Undefined: every call
   * needs a token.
   */
  local?: LocalSession;
}

/** The viewer over HTTP: the page and its assets, `GET /api/session`, `POST /api/tools/{name}`, `GET /api/spaces/{id}/changes` (changes.ts). */
export interface UiHandler {
  /** Who a bearer stands for: this session's secret, or a token (called by the front door, for every request bearing one). */
  authenticate: Handler<Caller>['authenticate'];
  handle: Handler<Caller>['handle'];
  /** Answers a request the front door refused, in the API's error shape, with the security headers. */
  refuse: Refuse;
}

/**
 * The viewer's server side. The page reads the store only through the API, which runs the MCP
 * tools' own definitions: no second data path, the same guard. Host, Origin, query-string
 * credentials, limits and the bearer (with `authenticate`) are checked before this handler by the
 * server it is mounted in (http/listen.ts).
 */
export function createUiHandler(options: UiHandlerOptions): UiHandler {
  const { assets } = options;
  const api = { core: options.core, logger: options.logger, local: options.local };

  const refuse: Refuse = (res, _url, status, message, headers = {}) =>
    sendJson(res, status, { status: status === 403 ? 'forbidden' : 'error', message }, headers);

  const serveAsset = (req: IncomingMessage, res: ServerResponse, urlPath: string): boolean => {
    const asset = assets.get(urlPath === '/index.html' ? '/' : urlPath);
    if (!asset) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, new URL('http://localhost'), 405, 'GET only', { allow: 'GET, HEAD' });
      return true;
    }
    const common = { 'content-type': asset.type, etag: asset.etag, 'cache-control': 'no-cache', vary: 'accept-encoding' };
    if (req.headers['if-none-match'] === asset.etag) {
      send(res, 304, common);
      return true;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip : asset.body;
    send(
      res,
      200,
      { ...common, 'content-length': String(body.length), ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
      req.method === 'HEAD' ? undefined : body,
    );
    return true;
  };

  return {
    refuse,
    authenticate: (token) => viewerCaller(api, token),
    async handle(req, res, url, admitted) {
      if (url.pathname === '/api/session') {
        // Every call needs a credential; `local_secret` tells the page that the URL `live-mem ui` printed carries one.
        // `model_configured`: without a model the page's consolidations can only fail (it offers no
        // MCP sampling), so it says what to set instead; system_health tells anyone as much already.
        return sendJson(res, 200, {
          status: 'ok',
          token_required: true,
          local_secret: options.local !== undefined,
          model_configured: options.core.context.llm !== undefined,
          version: options.version,
        });
      }
      const changes = CHANGES_PATH.exec(url.pathname)?.[1];
      if (changes !== undefined) return streamChanges(options.core, req, res, changes, admitted);
      const tool = /^\/api\/tools\/([a-z_]+)$/.exec(url.pathname)?.[1];
      if (tool !== undefined) {
        const answer = await runToolRequest(api, req, tool, admitted.caller);
        return sendJson(res, answer.status, answer.body, answer.headers);
      }
      if (serveAsset(req, res, url.pathname)) return;
      refuse(res, url, 404, `not found: ${url.pathname}`);
    },
  };
}
