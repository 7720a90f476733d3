import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import type { Caller } from '../core/caller.js';
import type { ProgressEvent } from '../core/consolidation/consolidation-service.js';
import type { Core } from '../core/core.js';
import { createSamplingLlm } from '../llm/sampling.js';
import type { LlmClient } from '../llm/types.js';
import { isLiveMemError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { listTools } from './listing.js';
import { selectTools, type ToolSelection } from './profiles.js';
import { CONSOLIDATE_BACKLOG, registerPrompts } from './prompts.js';
import { registerResources } from './resources.js';
import { toolError, toolResult } from './result.js';
import type { ToolContext, ToolDefinition, ToolExtra } from './tool.js';

export interface McpServerOptions {
  core: Core;
  version: string;
  logger: Logger;
  /** Who is calling, per request: the local owner on stdio; tokens later. */
  resolveCaller(extra: ToolExtra): Caller | Promise<Caller>;
  /** What to assume of the client's model when consolidating through sampling. */
  samplingLimits?: { contextWindow: number; maxOutputTokens: number };
  /** The tools offered (a profile, see profiles.ts); default: every tool. */
  tools?: ToolSelection;
  /**
   * Whether the transport can send notifications outside a request's answer (stdio: yes, default).
   * Without, resources.subscribe and the listChanged capabilities are not advertised: a promise the
   * stateless HTTP transport (GET /mcp is 405) could never keep.
   */
  notifications?: boolean;
}

/** The memory workflow, for clients that pass instructions to the model; README carries the same text for the others. */
export const SERVER_INSTRUCTIONS = [
  'live-mem is a memory shared by agents and sessions, one space per project (space_list shows them).',
  'Start of a task: memory_context (space_id, query = the task) loads what matters within a token budget;',
  'space_summary loads the rules, synthesis and whole bank. Later, memory_search finds past facts, decisions',
  'and problems; live_read shows what other agents just wrote.',
  'While working, record with live_note as things happen, one fact per note, in its category: decision (what',
  'was chosen and why), progress (done, now works), issue (a problem), todo (work left), question (open),',
  'insight (a lesson), observation (a fact noticed). Notes never overwrite each other.',
  `Before stopping, note the session's decisions, progress and open questions. When ${CONSOLIDATE_BACKLOG} or more notes`,
  'wait (space_list counts them), call bank_consolidate to fold them into the memory bank.',
].join('\n');

/** An MCP server exposing the core's tools; the transport is the caller's choice. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'live-mem', title: 'live-mem', version: options.version },
    // The SDK answers resources/list, read and templates but not subscribe: resources.ts does, hence `subscribe` here.
    { capabilities: { tools: {}, logging: {}, resources: { subscribe: true, listChanged: true }, prompts: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const limits = options.samplingLimits ?? { contextWindow: 32_768, maxOutputTokens: 8_192 };

  /** The client's own model, when no endpoint is configured and the client offers sampling. */
  const clientModel = (): LlmClient | undefined => {
    if (options.core.context.llm || !server.server.getClientCapabilities()?.sampling) return undefined;
    return createSamplingLlm(async (request) => {
      const result = await server.server.createMessage(
        {
          systemPrompt: request.systemPrompt,
          messages: request.messages.map((m) => ({ role: m.role, content: { type: 'text' as const, text: m.text } })),
          maxTokens: request.maxTokens,
          includeContext: 'none',
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        },
        // The shared call helper owns the timeout (through the signal); the SDK's 60 s default must not cut first.
        { ...(request.signal ? { signal: request.signal } : {}), timeout: 24 * 3600 * 1000 },
      );
      const content = Array.isArray(result.content) ? result.content[0] : result.content;
      return { text: content?.type === 'text' ? content.text : '', model: result.model, truncated: result.stopReason === 'maxTokens' };
    }, limits);
  };

  /** The caller; a public tool answers an unknown, revoked or expired token as anonymous. */
  const resolveCaller = async (tool: ToolDefinition, extra: ToolExtra): Promise<Caller> => {
    try {
      return await options.resolveCaller(extra);
    } catch (error) {
      if (tool.permission === 'public' && isLiveMemError(error, 'forbidden')) return ANONYMOUS;
      throw error;
    }
  };

  /**
   * Progress notifications for one call. They are sent without waiting, and the answer waits for
   * them (`sent`): a notification that overtook the answer would reach a client that had already
   * forgotten the call's progress token.
   */
  const progressChannel = (extra: ToolExtra) => {
    let sent: Promise<unknown> = Promise.resolve();
    return {
      report(event: ProgressEvent) {
        const progressToken = extra._meta?.progressToken;
        if (progressToken === undefined) return;
        const notification = extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: event.notes_done, total: event.notes_total, message: event.message },
          })
          .catch(() => undefined);
        sent = Promise.all([sent, notification]);
      },
      sent: () => sent,
    };
  };

  const { profile, tools } = options.tools ?? selectTools('all');
  for (const tool of tools) {
    // The output schema is listed (listing.ts) but not given to the SDK: it would parse every result
    // against it on every call (a fifth of a note's CPU time). The results are checked where they
    // are read, by clients such as the SDK's own, and the tests run such a client over every tool.
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: tool.annotations },
      async (args: Record<string, unknown>, extra: ToolExtra) => {
        const progress = progressChannel(extra);
        try {
          const context: ToolContext = {
            core: options.core,
            caller: await resolveCaller(tool, extra),
            extra,
            clientModel,
            reportProgress: progress.report,
            tools: { profile, count: tools.length },
          };
          const result = await tool.handler(args as never, context);
          await progress.sent();
          return toolResult(result);
        } catch (error) {
          return toolError(error, options.logger, tool.name);
        }
      },
    );
  }
  // Replaces the SDK's tools/list answer with a leaner one (listing.ts), built on the first request.
  let listing: Tool[] | undefined;
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: (listing ??= listTools(tools)) }));

  // Resources and prompts read through the core with the request's caller, as the tools do.
  const notifications = options.notifications ?? true;
  const host = { core: options.core, logger: options.logger, caller: async (extra: ToolExtra) => options.resolveCaller(extra) };
  registerResources(server, { ...host, notifications });
  registerPrompts(server, host);
  // The SDK declares listChanged for each kind it registers; merged last, these take them back.
  if (!notifications)
    server.server.registerCapabilities({
      tools: { listChanged: false },
      prompts: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
    });
  return server;
}
