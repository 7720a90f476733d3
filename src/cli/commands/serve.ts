import type { Opened } from '../open.js';
import { VERSION } from '../version.js';

/**
 * Serves MCP on stdio until stdin closes. stdout carries JSON-RPC only; logs go to stderr.
 * The MCP SDK is imported here, lazily, so shell commands never pay for it.
 */
export async function serveStdio(opened: Opened): Promise<void> {
  const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../../mcp/server.js'),
  ]);
  const server = createMcpServer({ core: opened.core, version: VERSION, logger: opened.logger, resolveCaller: () => opened.caller });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  opened.logger.info(`serving MCP on stdio (store: ${opened.core.context.storage.name} ${opened.core.context.storage.location}, agent: ${opened.caller.agent})`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
}
