import { isJSONRPCRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/server';
import type { RequestId } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Logger } from '../shared/log.js';
import { shownUrl } from '../shared/shown-url.js';

/** JSON-RPC's code for an error of the server's own (the spec leaves -32000 to -32099 to implementations). */
const UNREACHABLE = -32000;

/**
 * Serves MCP on stdio by relaying every message, as it is, to a live-mem server over Streamable
 * HTTP, and every message of that server back: for a client whose configuration can only launch a
 * process (Claude Desktop reads no remote entry from its file). The token is sent on each request
 * and never leaves this process. The relay reads only what the transport needs: the protocol
 * version the server chose at `initialize` (sent back on each later request), and which request
 * a failed POST carried, so that a server that cannot be reached answers the client with an error
 * saying so, instead of leaving it waiting. Runs until stdin closes or a signal arrives, then ends
 * the server's session.
 */
export async function relayStdio(options: { url: URL; token: string; logger: Logger }): Promise<void> {
  const { url, logger } = options;
  const shown = shownUrl(url); // what logs and errors name: no credential of the URL
  const remote = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } });
  const local = new StdioServerTransport();
  const initializing = new Set<RequestId>();

  local.onmessage = (message) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') initializing.add(message.id);
    remote.send(message).catch((error: unknown) => {
      const why = (error instanceof Error ? error.message : String(error)).replaceAll(url.href, shown);
      logger.warn(`live-mem connect: ${shown}: ${why}`);
      if (isJSONRPCRequest(message)) {
        void local.send({ jsonrpc: '2.0', id: message.id, error: { code: UNREACHABLE, message: `the live-mem server at ${shown} did not answer: ${why}` } });
      }
    });
  };
  remote.onmessage = (message) => {
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id) && typeof message.result.protocolVersion === 'string') {
      remote.setProtocolVersion(message.result.protocolVersion);
    }
    void local.send(message);
  };
  // The server's stream for its own messages may be refused or cut: requests still go through.
  remote.onerror = (error) => logger.debug(`live-mem connect: ${shown}: ${error.message.replaceAll(url.href, shown)}`);
  local.onerror = (error) => logger.warn(`live-mem connect: stdin: ${error.message}`);

  await remote.start();
  await local.start();
  logger.info(`relaying MCP on stdio to ${shown}`);
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // The server may keep a session until it times out: ending it frees its slot now (best effort).
  if (remote.sessionId) await remote.terminateSession().catch(() => undefined);
  await remote.close();
  await local.close();
}
