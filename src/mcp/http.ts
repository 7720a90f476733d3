import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Caller } from '../core/caller.js';
import { isLiveMemError } from '../shared/errors.js';
import { createMcpServer, type McpServerOptions } from './server.js';

export interface HttpOptions extends Omit<McpServerOptions, 'resolveCaller'> {
  host: string;
  port: number;
  /** The caller a bearer token stands for; throws `forbidden` for a wrong, expired or revoked one. */
  authenticate(token: string): Promise<Caller>;
}

/** Query parameters that would carry a credential in a URL (logged by every proxy on the way): refused. */
const CREDENTIAL_PARAMS = ['token', 'access_token', 'api_key', 'apikey', 'key', 'auth', 'authorization'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: every request carries `Authorization: Bearer …`,
 * is checked (Host and Origin against DNS rebinding, then the token — so a revocation or an expiry
 * applies to the very next request), and is served by a fresh server bound to that caller. Several
 * clients share the process safely; nothing of one request is visible to another.
 */
export async function serveHttp(options: HttpOptions): Promise<{ url: string; close(): Promise<void> }> {
  const allowedHosts = new Set<string>();
  const allowedOrigins = new Set<string>();
  const remember = (host: string, port: number) => {
    const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    allowedHosts.add(`${name}:${port}`);
    allowedOrigins.add(`http://${name}:${port}`);
    allowedOrigins.add(`https://${name}:${port}`);
  };

  const reply = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000 - status, message }, id: null }));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') return reply(res, 404, 'not found: MCP is served at /mcp');
    if (CREDENTIAL_PARAMS.some((name) => url.searchParams.has(name))) {
      return reply(res, 400, 'credentials in the query string are refused: send them as Authorization: Bearer <token>');
    }
    if (!allowedHosts.has(String(req.headers.host ?? '').toLowerCase())) return reply(res, 403, 'forbidden Host header (DNS rebinding protection)');
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) return reply(res, 403, 'forbidden Origin header (DNS rebinding protection)');
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer) return reply(res, 401, 'missing Authorization: Bearer <token>', { 'www-authenticate': 'Bearer realm="live-mem"' });
    try {
      await options.authenticate(bearer);
    } catch (error) {
      if (isLiveMemError(error, 'forbidden'))
        return reply(res, 403, 'forbidden: this token is unknown, revoked or expired', { 'www-authenticate': 'Bearer error="invalid_token"' });
      throw error;
    }
    if (req.method !== 'POST') return reply(res, 405, 'this server is stateless: POST JSON-RPC to /mcp', { allow: 'POST' });

    // Each tool call checks the token again: one revoked mid-request is refused from then on.
    const server = createMcpServer({ ...options, resolveCaller: () => options.authenticate(bearer) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.logger.error('HTTP request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) reply(res, 500, 'internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  remember(options.host, port);
  if (LOOPBACK.has(options.host)) for (const host of LOOPBACK) remember(host, port);
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
