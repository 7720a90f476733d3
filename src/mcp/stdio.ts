import type { McpServer, Transport } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { legacyErrors } from './result.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/**
 * Serves MCP on stdio until stdin closes or a signal arrives. stdout carries JSON-RPC only; logs go
 * to stderr. In-flight calls finish before the server closes: a note being written is either
 * answered or was never acknowledged, and the store never holds half of one.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const server = await connectServer(options, new StdioServerTransport());
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
}

/**
 * The server stdio serves, connected to `transport`: stdio's in the binary; in a test, one end of the
 * SDK's InMemoryTransport, so the very server the binary serves answers without a process.
 */
export async function connectServer(options: McpServerOptions, transport: Transport): Promise<McpServer> {
  const server = await createMcpServer(options);
  await server.connect(legacyErrors(transport));
  return server;
}
