import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { Logger } from '../shared/log.js';
import { toolError, toolResult } from './result.js';
import { createDefaultSpaces } from './default-space.js';
import { runTool, type ToolContext, type ToolDefinition, type RequestContext } from './tool.js';

export interface DirectCall {
  core: Core;
  caller: Caller;
  logger: Logger;
  /** Aborts the call when its client goes away. */
  signal: AbortSignal;
  /** What system_about and system_whoami report as the tools offered. */
  tools: ToolContext['tools'];
}

/**
 * Runs a tool definition outside an MCP session (the web viewer's API), exactly as the MCP server
 * would: arguments checked and defaulted by runTool, the same handler, and the result or
 * the error mapped by the same functions as a `tools/call` answer. There is no client model (no sampling) and no progress channel: a long
 * call is started in the background and followed through its status tool instead.
 */
export async function callToolDirect(tool: ToolDefinition, args: unknown, call: DirectCall): Promise<{ result: Record<string, unknown>; isError: boolean }> {
  const answer = await (async () => {
    try {
      // Handlers read the core, the caller and the tools' profile; nothing reaches for the MCP request.
      const ctx = {
        mcpReq: { id: 0, method: 'tools/call', signal: call.signal, notify: async () => undefined, send: async () => undefined },
      } as unknown as RequestContext;
      return toolResult(
        await runTool(tool, args, {
          core: call.core,
          caller: call.caller,
          ctx,
          clientModel: () => undefined,
          reportProgress: () => undefined,
          tools: call.tools,
          // As over HTTP: no roots, no client folder; only a token limited to one space has a default.
          spaces: createDefaultSpaces({ core: call.core, logger: call.logger }),
        }),
      );
    } catch (error) {
      return toolError(error, call.logger, tool.name);
    }
  })();
  return { result: answer.structuredContent as Record<string, unknown>, isError: answer.isError === true };
}
