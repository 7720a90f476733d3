import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isJSONRPCRequest,
  isLegacyRequest,
  type McpServerFactory,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import type { Caller } from '../core/caller.js';
import { LiveMemError } from '../shared/errors.js';
import { answerJsonOnly, bearerChallenge, RESOURCE_METADATA_PATH, replyResourceMetadata } from './http-answers.js';
import { type Admitted, bearerOf, type Refuse } from '../http/listen.js';
import type { Mount } from '../http/mount.js';
import { createListenServing } from './http-listen.js';
import { listenFilter } from './listen-watch.js';
import { type ToolSelection, selectTools } from './profiles.js';
import { legacyErrors } from './result.js';
import { createMcpServer, type McpServerOptions } from './server.js';
import { SharedServerTransport } from './shared-transport.js';
import type { ToolDefinition, RequestContext } from './tool.js';
import { allTools } from './tools/index.js';

/** The caller the front door authenticated for this request (set on `req.auth` by handleMcp). */
function callerOf(ctx: RequestContext): Caller {
  const caller = ctx.http?.authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new LiveMemError('forbidden', 'this request carries no authenticated caller');
  return caller;
}

/** The tools this request's URL asked to be listed (set on `req.auth` by handleMcp), if it asked. */
const askedOf = (ctx: RequestContext): ToolSelection | undefined => ctx.http?.authInfo?.extra?.tools as ToolSelection | undefined;

/**
 * The profile a URL asks for (`/mcp?tools=standard`, a profile or tool names, as LIVE_MEM_TOOLS
 * takes them), of the tools served: a tool this server does not serve is left out, a name that is
 * no tool refused. Without `tools`, undefined: the server's default listing.
 */
function askedTools(url: URL, served: readonly ToolDefinition[]): ToolSelection | undefined {
  const spec = url.searchParams.get('tools');
  if (spec === null) return undefined;
  const asked = selectTools(spec, allTools, "the URL's tools parameter (?tools=)");
  const names = new Set(served.map((tool) => tool.name));
  return { profile: asked.profile, tools: asked.tools.filter((tool) => names.has(tool.name)) };
}

export interface HttpOptions extends Omit<McpServerOptions, 'resolveCaller' | 'notifications' | 'sampling' | 'project' | 'listed' | 'remote'> {
  /**
   * What a client that names no profile in its URL (`?tools=`) is listed, of the tools served
   * (default: every one). The tools served are what a client may ask for; a caller is listed only
   * those its token may call.
   */
  listed?: ToolSelection;
  /** The front door trusts a reverse proxy's X-Forwarded-* headers: so do the URLs this endpoint gives clients. */
  trustProxy?: boolean;
  /** The caller a bearer token stands for; throws `forbidden` for a wrong, expired or revoked one. */
  authenticate(token: string): Promise<Caller>;
}

/** A JSON-RPC error answering the whole HTTP request (no id: it answers no one message), as the MCP transport's own are. */
const replyError = (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};
const replyJsonRpc: Refuse = (res, _url, status, message, headers = {}) => replyError(res, status, -32000 - status, message, headers);

/** The SDK's own answer to a body over its limit (its transport's wording, which v2 no longer exports). */
const BODY_TOO_LARGE = `Payload Too Large: Request body must not exceed ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`;

/**
 * Whether a body is a 2026-07-28 message: one that names its protocol version in its `_meta` envelope.
 * A body without that key is 2025's, told at no cost. One with it is the SDK's to classify, and the
 * modern entry classifies every request it serves (an invalid envelope is refused there, as the
 * revision says); the one body with the key the SDK may still call 2025's is an `initialize` whose
 * envelope is not a valid claim, so only an `initialize` is classified here, not every modern request
 * twice (a web Request built for it alone was a twelfth of a modern call's CPU: bench 27).
 */
async function isModern(req: IncomingMessage, body: unknown): Promise<boolean> {
  const message = body as { method?: unknown; params?: { _meta?: unknown } } | null;
  const meta = message?.params?._meta;
  if (typeof meta !== 'object' || meta === null || !(PROTOCOL_VERSION_META_KEY in meta)) return false;
  if (message?.method !== 'initialize') return true;
  return !(await isLegacyRequest(await toWebRequest(req, body), body));
}

/** The first MCP version without JSON-RPC batches (they were added in 2025-03-26 and removed in 2025-06-18). */
const NO_BATCHES_SINCE = '2025-06-18';
/** What a request without MCP-Protocol-Version speaks (the transport specification's rule for older clients). */
const VERSION_WITHOUT_HEADER = '2025-03-26';

/**
 * A POST's body, read here rather than by the SDK's transport so that a batch is known before it
 * runs: each of its requests is a call, counted against the caller's share (`charge`), and a
 * batch in a protocol version that has none is refused. Answers and returns undefined when the
 * request is refused (in the shape the SDK's transport uses for the same faults).
 */
async function readMessages(req: IncomingMessage, res: ServerResponse, admitted: Admitted<Caller>): Promise<{ body: unknown } | undefined> {
  const tooLarge = (): undefined => {
    replyError(res, 413, -32000, BODY_TOO_LARGE);
    return undefined;
  };
  if (Number(req.headers['content-length']) > DEFAULT_MAX_REQUEST_BODY_SIZE) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DEFAULT_MAX_REQUEST_BODY_SIZE) return tooLarge();
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    replyError(res, 400, -32700, 'Parse error: Invalid JSON');
    return undefined;
  }
  if (!Array.isArray(body)) return { body };
  const version = String(req.headers['mcp-protocol-version'] ?? VERSION_WITHOUT_HEADER);
  if (version >= NO_BATCHES_SINCE) {
    replyError(res, 400, -32600, `Invalid Request: MCP ${version} has no JSON-RPC batches (removed in ${NO_BATCHES_SINCE}): send one message per request`);
    return undefined;
  }
  // The request itself was counted as one call when it arrived; a batch's other requests count too.
  const calls = body.filter((message) => isJSONRPCRequest(message)).length;
  const refused = admitted.charge(calls - 1);
  if (refused) {
    if (refused.retryAfterS === undefined) replyError(res, 400, -32600, `Invalid Request: ${refused.message}`);
    else replyError(res, 429, -32429, refused.message, { 'retry-after': String(refused.retryAfterS) });
    return undefined;
  }
  return { body };
}

/**
 * MCP over Streamable HTTP at `/mcp`, stateless, in both eras, as a mount of the HTTP front door (http/): every
 * request carries `Authorization: Bearer …`, is checked by the front door (Host and Origin against
 * DNS rebinding, the caller's share, then the token — so a revocation or an expiry applies to the
 * very next request), and is served by the process's one server through a transport of its own
 * (shared-transport.ts), the caller carried with its messages. Several clients share the process
 * safely; nothing of one request is visible to another. A 2026-07-28 request (`_meta` envelope) goes
 * to the SDK's entry for that era (createMcpHandler), behind the same front door and body reading;
 * 2025 clients keep the shared server, as they were served before. The mount owns `/mcp` and its resource
 * metadata; alone behind a front door, it answers 404 on every other path.
 */
export async function createMcpHttp(options: HttpOptions): Promise<{ mount: Mount<Caller>; close(): Promise<void> }> {
  const trustProxy = options.trustProxy === true;
  // Built once (tools, schemas, resources, prompts, the tools/list answer); each request is a transport over it.
  // No notifications and no sampling for a 2025 client: a stateless server has no stream to send them on once the
  // request is answered. A 2026-07-28 client opens listen streams instead (http-listen.ts).
  const served = options.tools ?? selectTools('all');
  const listed = options.listed ?? served;
  const serverOptions: McpServerOptions = {
    ...options,
    resolveCaller: callerOf,
    listed: (ctx) => askedOf(ctx) ?? listed,
    remote: true,
    notifications: false,
    sampling: false,
  };
  const server = await createMcpServer(serverOptions);
  const shared = new SharedServerTransport();
  await server.connect(legacyErrors(shared));
  // A 2026-07-28 client (its request carries the `_meta` envelope) is served by the SDK's entry, an
  // instance per request fitted to its token (`authInfo`): that era has no session to share.
  // It may lend its model: input_required rounds come back as new requests, to any replica (model-rounds.ts).
  const factory: McpServerFactory = ({ authInfo }) => createMcpServer({ ...serverOptions, era: 'modern', sampling: true, authInfo });
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror: (error) => options.logger.debug(`MCP over HTTP: ${error.message}`) });
  // Its listen streams, each fed by the change feed for what its token may read (http-listen.ts).
  const listening = createListenServing({
    core: options.core,
    logger: options.logger,
    factory,
    authenticate: (req) => options.authenticate(bearerOf(req) ?? ''),
  });
  const serveModern = toNodeHandler(modern, { onerror: (error) => options.logger.warn(`MCP over HTTP: ${error.message}`) });

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, url: URL, admitted: Admitted<Caller>): Promise<void> => {
    const { caller } = admitted;
    const bearer = bearerOf(req);
    if (!caller || bearer === undefined)
      return replyJsonRpc(res, url, 401, 'missing Authorization: Bearer <token>', { 'www-authenticate': bearerChallenge(req, trustProxy) });
    if (req.method !== 'POST') return replyJsonRpc(res, url, 405, 'this server is stateless: POST JSON-RPC to /mcp', { allow: 'POST' });
    let tools: ToolSelection | undefined;
    try {
      tools = askedTools(url, served.tools);
    } catch (error) {
      return replyError(res, 400, -32602, error instanceof Error ? error.message : String(error));
    }
    const messages = await readMessages(req, res, admitted);
    if (!messages) return;

    // The caller and the tools it asked for travel with this request's messages (ctx.http.authInfo), never in the shared server.
    (req as IncomingMessage & { auth?: AuthInfo }).auth = {
      token: bearer,
      clientId: caller.agent,
      scopes: [...caller.permissions],
      extra: { caller, ...(tools ? { tools } : {}) },
    };
    if (await isModern(req, messages.body)) {
      const listen = listenFilter(messages.body);
      return listen ? listening.serve(req, res, messages.body, listen, admitted) : serveModern(req, res, messages.body);
    }
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: answerJsonOnly(req) });
    const { detach } = shared.attach(transport);
    res.on('close', () => {
      detach();
      void transport.close();
    });
    await transport.start();
    await transport.handleRequest(req, res, messages.body);
  };

  const mount: Mount<Caller> = {
    owns: (url) => url.pathname === '/mcp' || url.pathname === RESOURCE_METADATA_PATH,
    authenticate: (token) => options.authenticate(token),
    handle: async (req, res, url, admitted) => {
      if (url.pathname === '/mcp') return handleMcp(req, res, url, admitted);
      if (url.pathname === RESOURCE_METADATA_PATH) return replyResourceMetadata(req, res, trustProxy);
      replyJsonRpc(res, url, 404, 'not found: MCP is served at /mcp');
    },
    refuse: replyJsonRpc,
  };
  return {
    mount,
    close: async () => {
      await listening.close();
      await modern.close();
      await server.close();
    },
  };
}
