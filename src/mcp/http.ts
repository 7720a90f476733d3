import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Caller } from '../core/caller.js';
import { isLiveMemError } from '../shared/errors.js';
import type { HttpLimits } from './http-limits.js';
import { bearerOf, listenGuarded, type NetworkOptions, type Refuse } from './http-listen.js';
import { createMcpServer, type McpServerOptions } from './server.js';

export interface HttpOptions extends Omit<McpServerOptions, 'resolveCaller' | 'notifications'>, NetworkOptions {
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
 * applies to the very next request), and is served by a fresh server bound to that caller. Several
 * clients share the process safely; nothing of one request is visible to another.
 */
export async function serveHttp(options: HttpOptions): Promise<{ url: string; origin: string; origins: string[]; close(): Promise<void> }> {
  const { other } = options;

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const bearer = bearerOf(req);
    if (!bearer) return replyJsonRpc(res, url, 401, 'missing Authorization: Bearer <token>', { 'www-authenticate': 'Bearer realm="live-mem"' });
    try {
      await options.authenticate(bearer);
    } catch (error) {
      if (isLiveMemError(error, 'forbidden'))
        return replyJsonRpc(res, url, 403, 'forbidden: this token is unknown, revoked or expired', { 'www-authenticate': 'Bearer error="invalid_token"' });
      throw error;
    }
    if (req.method !== 'POST') return replyJsonRpc(res, url, 405, 'this server is stateless: POST JSON-RPC to /mcp', { allow: 'POST' });

    // Each tool call checks the token again: one revoked mid-request is refused from then on.
    // No notifications: a stateless server has no stream to send them on once the request is answered.
    const server = createMcpServer({ ...options, resolveCaller: () => options.authenticate(bearer), notifications: false });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
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
      if (other) return other.handle(req, res, url);
      replyJsonRpc(res, url, 404, 'not found: MCP is served at /mcp');
    },
    refuse: (res, url, ...rest) => (isMcp(url) ? replyJsonRpc(res, url, ...rest) : other?.refuse(res, url, ...rest)),
  });
  return { url: `${origin}/mcp`, origin, origins, close };
}
