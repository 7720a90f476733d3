import type { IncomingMessage } from 'node:http';
import type { Caller } from '../core/caller.js';
import { hashToken, sameHash } from '../core/auth/token-store.js';
import type { Core } from '../core/core.js';
import { callToolDirect } from '../mcp/call.js';
import type { ToolDefinition } from '../mcp/tool.js';
import { allTools } from '../mcp/tools/index.js';
import { invalid } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';

/**
 * The tools the page may call: the reads it shows, and one write, starting a consolidation (for a
 * token with write, after the page asked for confirmation). Every other tool — notes, deletes,
 * tokens, backups — is refused here whatever the caller's rights: the viewer is for looking. The
 * list does not follow LIVE_MEM_TOOLS, which trims what agents pay for in tokens, not what people see.
 */
export const VIEWER_TOOLS: ReadonlySet<string> = new Set([
  'space_list',
  'space_info',
  'live_read',
  'memory_search',
  'history_list',
  'history_read',
  'summaries_list',
  'summaries_read',
  'bank_list',
  'bank_read',
  'bank_explain',
  'bank_consolidation_status',
  'system_whoami',
  'bank_consolidate',
]);

const byName = new Map<string, ToolDefinition>(allTools.filter((tool) => VIEWER_TOOLS.has(tool.name)).map((tool) => [tool.name, tool]));

/** Requests larger than this are refused: the page's arguments are a few ids and a query. */
const MAX_BODY_BYTES = 64 * 1024;

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The HTTP status of a tool's result: success 200, each error status its 4xx, failures of the server or the model 5xx. */
export function httpStatusOf(result: Record<string, unknown>): number {
  switch (result.status) {
    case 'ok':
    case 'created':
    case 'deleted':
    case 'partial':
      return 200;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'already_exists':
      return 409;
    default:
      return result.code === 'internal' || result.code === 'storage_error' ? 500 : result.code === 'llm_error' ? 502 : 400;
  }
}

const refusal = (status: number, message: string, headers?: Record<string, string>): ApiAnswer => ({
  status,
  body: { status: status === 403 ? 'forbidden' : status === 404 ? 'not_found' : 'error', message },
  ...(headers ? { headers } : {}),
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw invalid(`the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw invalid('the request body is not JSON');
  }
}

/**
 * `live-mem ui`'s own session: a request bearing its secret acts as the process's caller. Loopback
 * is no user boundary — every local user reaches 127.0.0.1 — so the secret, printed to the owner
 * only, is what tells the owner's browser from another user's client (as Jupyter's token does).
 */
export interface LocalSession {
  /** SHA-256 (hex) of the secret: compared in constant time, the secret itself is not kept here. */
  secretHash: string;
  caller: () => Promise<Caller>;
}

export interface ToolApiOptions {
  core: Core;
  logger: Logger;
  /** `live-mem ui`'s session, if any; without it only tokens are accepted. */
  local: LocalSession | undefined;
}

/**
 * Who a bearer stands for on the viewer: the local session's secret, or a token — checked at each
 * call (by the front door, http/listen.ts), so a revocation applies at once. Throws `forbidden`.
 */
export async function viewerCaller(options: ToolApiOptions, token: string): Promise<Caller> {
  const local = options.local && sameHash(hashToken(token), options.local.secretHash) ? options.local : undefined;
  // The local caller may itself be a token (LIVE_MEM_TOKEN of the process): refused the same way when it is bad.
  return local ? await local.caller() : await options.core.auth.resolve(token);
}

/**
 * `POST /api/tools/{name}`: the arguments as a JSON object, run by the tool's own definition and
 * the core's guard (callToolDirect), as the caller the front door authenticated (`viewerCaller`).
 * A request without a JSON content type is refused: a cross-origin page cannot send one without
 * a CORS preflight, which this server never grants.
 */
export async function runToolRequest(options: ToolApiOptions, req: IncomingMessage, name: string, caller: Caller | undefined): Promise<ApiAnswer> {
  if (req.method !== 'POST') return refusal(405, 'call a tool with POST', { allow: 'POST' });
  if (!/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) return refusal(415, 'send the arguments as application/json');
  const tool = byName.get(name);
  if (!tool) return refusal(404, `the viewer offers no tool named ${JSON.stringify(name)}`);

  if (caller === undefined) {
    const what = options.local ? 'the secret of the URL `live-mem ui` printed, or a token' : 'a token';
    return refusal(401, `${what} is needed: send it as Authorization: Bearer <token>`, { 'www-authenticate': 'Bearer realm="live-mem"' });
  }

  let args: unknown;
  try {
    args = await readJson(req);
  } catch (error) {
    return refusal(400, error instanceof Error ? error.message : String(error));
  }
  const controller = new AbortController();
  req.once('close', () => controller.abort());
  const { result } = await callToolDirect(tool, args, {
    core: options.core,
    caller,
    logger: options.logger,
    signal: controller.signal,
    tools: { profile: 'viewer', count: byName.size },
  });
  return { status: httpStatusOf(result), body: result };
}
