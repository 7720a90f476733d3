import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { Logger } from '../shared/log.js';
import { toolError, toolSuccess } from './result.js';
import type { ToolDefinition, ToolExtra } from './tool.js';
import { allTools } from './tools/index.js';

export interface McpServerOptions {
  core: Core;
  version: string;
  logger: Logger;
  /** Who is calling, per request: the local owner on stdio; tokens later. */
  resolveCaller(extra: ToolExtra): Caller | Promise<Caller>;
  tools?: ToolDefinition[];
}

export const SERVER_INSTRUCTIONS =
  'live-mem is a shared working memory. At the start of a task call space_summary (or bank_read_all) for the project\'s space; ' +
  'while working, record facts, decisions, progress and issues with live_note; read what other agents wrote with live_read.';

/** An MCP server exposing the core's tools; the transport is the caller's choice. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'live-mem', title: 'live-mem', version: options.version },
    { capabilities: { tools: {}, logging: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  for (const tool of options.tools ?? allTools) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: tool.annotations },
      async (args: Record<string, unknown>, extra: ToolExtra) => {
        try {
          const caller = await options.resolveCaller(extra);
          return toolSuccess(await tool.handler(args as never, { core: options.core, caller, extra }));
        } catch (error) {
          return toolError(error, options.logger, tool.name);
        }
      },
    );
  }
  return server;
}
