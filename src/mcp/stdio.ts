import type { McpServer, Transport } from '@modelcontextprotocol/server';
import { serveStdio as serveEras, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { isLiveMemError } from '../shared/errors.js';
import { legacyErrors } from './result.js';
import { createMcpServer, type McpServerOptions } from './server.js';
import { withListenStreams } from './stdio-listen.js';
import type { RequestContext } from './tool.js';

/**
 * Serves MCP on stdio until stdin closes or a signal arrives, to a client of either era: the SDK's
 * entry (serveStdio) reads the opening message — `initialize` (MCP 2025) or an enveloped request
 * such as `server/discover` (2026-07-28) — and pins the connection to an instance built for that era
 * (createMcpServer `era`). stdout carries JSON-RPC only; logs go to stderr. In-flight calls finish
 * before the server closes: a note being written is either answered or was never acknowledged, and
 * the store never holds half of one.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const handle = serveConnection(options, new StdioServerTransport());
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await handle.close();
}

/**
 * One connection of either era over `wire` (stdio; in a test, one end of an InMemoryTransport). A
 * 2025 client subscribes through its instance (resources.ts); a 2026-07-28 client's listen streams,
 * which the entry answers, are fed by the change feed through the transport (stdio-listen.ts).
 */
export function serveConnection(options: McpServerOptions, wire: Transport): { close(): Promise<void> } {
  let era: McpServerOptions['era'] = 'legacy';
  const opening = { mcpReq: {} } as unknown as RequestContext;
  const caller = async () => {
    try {
      return await options.resolveCaller(opening);
    } catch (error) {
      if (isLiveMemError(error, 'forbidden')) return undefined;
      throw error;
    }
  };
  const transport = withListenStreams(
    legacyErrors(wire, () => era === 'legacy'),
    { core: options.core, logger: options.logger, caller },
  );
  return serveEras(
    async (context) => {
      era = context.era;
      return createMcpServer({ ...options, era: context.era });
    },
    { transport, onerror: (error) => options.logger.debug(`MCP on stdio: ${error.message}`) },
  );
}

/**
 * The server stdio serves to a 2025-era client, connected to `transport`: in a test, one end of the
 * SDK's InMemoryTransport, so the very server the binary serves answers without a process.
 */
export async function connectServer(options: McpServerOptions, transport: Transport): Promise<McpServer> {
  const server = await createMcpServer(options);
  await server.connect(legacyErrors(transport));
  return server;
}
