import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Caller } from '../core/caller.js';
import { isLiveMemError, LiveMemError } from '../shared/errors.js';
import { answerJsonOnly, bearerChallenge, RESOURCE_METADATA_PATH, replyResourceMetadata } from './http-answers.js';
import type { HttpLimits } from './http-limits.js';
import { bearerOf, listenGuarded, type NetworkOptions, type Refuse } from './http-listen.js';
import { plainErrors } from './result.js';
import { createMcpServer, type McpServerOptions } from './server.js';
import { SharedServerTransport } from './shared-transport.js';
import type { ToolExtra } from './tool.js';

/** The caller the front door authenticated for this request (set on `req.auth` by handleMcp). */
function callerOf(extra: ToolExtra): Caller {
  const caller = extra.authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new LiveMemError('forbidden', 'this request carries no authenticated caller');
  return caller;
}

export interface HttpOptions extends Omit<McpServerOptions, 'resolveCaller' | 'notifications' | 'sampling'>, NetworkOptions {
  host: string;
  port: number;
  /** Connections, and requests per token (default: DEFAULT_HTTP_LIMITS). */
  limits?: HttpLimits;
  /** The caller a bearer token stands for; throws `forbidden` for a wrong, expired or revoked one. */
  authenticate(token: string): Promise<Caller>;
  /**
   * Serves every path but /mcp (the web viewer, mounted by the CLI: this layer does not know it),
   * after the same Host, Origin and query-string checks. Without it, other paths are 404.
   */
  other?: { handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>; refuse: Refuse };
}

const replyJsonRpc: Refuse = (res, _url, status, message, headers = {}) => {
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000 - status, message }, id: null }));
};

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: every request carries `Authorization: Bearer …`,
 * is checked (Host and Origin against DNS rebinding, then the token — so a revocation or an expiry
 * applies to the very next request), and is served by the process's one server through a transport
 * of its own (shared-transport.ts), the caller carried with its messages. Several clients share the
 * process safely; nothing of one request is visible to another.
 */
export async function serveHttp(options: HttpOptions): Promise<{ url: string; origin: string; origins: string[]; close(): Promise<void> }> {
  const { other } = options;
  // Built once (tools, schemas, resources, prompts, the tools/list answer); each request is a transport over it.
  // No notifications and no sampling: a stateless server has no stream to send them on once the request is answered.
  const server = createMcpServer({ ...options, resolveCaller: callerOf, notifications: false, sampling: false });
  const shared = new SharedServerTransport();
  await server.connect(plainErrors(shared));

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const bearer = bearerOf(req);
    if (!bearer)
      return replyJsonRpc(res, url, 401, 'missing Authorization: Bearer <token>', { 'www-authenticate': bearerChallenge(req, options.trustProxy === true) });
    let caller: Caller;
    try {
      caller = await options.authenticate(bearer);
    } catch (error) {
      if (isLiveMemError(error, 'forbidden'))
        return replyJsonRpc(res, url, 403, 'forbidden: this token is unknown, revoked or expired', { 'www-authenticate': 'Bearer error="invalid_token"' });
      throw error;
    }
    if (req.method !== 'POST') return replyJsonRpc(res, url, 405, 'this server is stateless: POST JSON-RPC to /mcp', { allow: 'POST' });

    // The caller travels with this request's messages (extra.authInfo), never in the shared server.
    (req as IncomingMessage & { auth?: AuthInfo }).auth = { token: bearer, clientId: caller.agent, scopes: [...caller.permissions], extra: { caller } };
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: answerJsonOnly(req) });
    const { detach } = shared.attach(transport);
    res.on('close', () => {
      detach();
      void transport.close();
    });
    await transport.start();
    await transport.handleRequest(req, res);
  };

  const isMcp = (url: URL) => url.pathname === '/mcp' || !other;
  const { origin, origins, close } = await listenGuarded({
    host: options.host,
    port: options.port,
    logger: options.logger,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {}),
    ...(options.authRequired ? { authRequired: true } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    handle: async (req, res, url) => {
      if (url.pathname === '/mcp') return handleMcp(req, res, url);
      if (url.pathname === RESOURCE_METADATA_PATH) return replyResourceMetadata(req, res, options.trustProxy === true);
      if (other) return other.handle(req, res, url);
      replyJsonRpc(res, url, 404, 'not found: MCP is served at /mcp');
    },
    refuse: (res, url, ...rest) => (isMcp(url) ? replyJsonRpc(res, url, ...rest) : other?.refuse(res, url, ...rest)),
  });
  return {
    url: `${origin}/mcp`,
    origin,
    origins,
    close: async () => {
      await close();
      await server.close();
    },
  };
}
