import type { CallToolResult, InputRequiredResult, McpServer } from '@modelcontextprotocol/server';
import { isInputRequiredResult, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import { withSimilarSpaces } from '../core/space/similar-spaces.js';
import type { LlmClient } from '../llm/types.js';
import { isLiveMemError } from '../shared/errors.js';
import type { Checkout } from '../shared/checkout.js';
import type { Logger } from '../shared/log.js';
import { offers, type Offered } from '../shared/hints.js';
import type { ModelRounds } from './model-rounds.js';
import { progressChannel } from './progress.js';
import { type CreatedTask, createdTask } from './tasks.js';
import { toolError, toolResult } from './result.js';
import { runTool, type RequestContext, type ToolContext, type ToolDefinition } from './tool.js';

/** What a tools/call needs of the server it runs in (createMcpServer). */
export interface ToolHost {
  /** Of the server's options (server.ts McpServerOptions), what a call reads. */
  options: {
    core: Core;
    logger: Logger;
    resolveCaller(ctx: RequestContext): Caller | Promise<Caller>;
    remote?: boolean;
    checkout?: (folder?: string) => Promise<Checkout | undefined>;
  };
  offered: Offered;
  offeredTo(caller: Caller, ctx: RequestContext): { profile: string; listed: ToolDefinition[]; offered: Offered };
  spaces: ToolContext['spaces'];
  /** Whether the client of `ctx` takes tasks (2026-07-28's extension, declared on the request). */
  takesTasks(ctx: RequestContext): boolean;
  /** Whether the client of `ctx` lends its model (no endpoint configured, sampling declared). */
  lendsModel(ctx: RequestContext): boolean;
  /** The client's model for a call of `tool`: pushed sampling requests (2025), or rounds of input_required (2026-07-28) with what they asked for. */
  clientModel(tool: ToolDefinition, ctx: RequestContext): { llm: LlmClient } | ModelRounds;
  /** A 2025-era client is told of a tool that does not exist as SDK v1 told it: a result with isError, not a JSON-RPC error. */
  legacy: boolean;
}

/**
 * Answers tools/call itself, rather than through the SDK's registerTool: neither schema is given to
 * the SDK; both are listed (listing.ts). The arguments are checked by parseArguments, so that a
 * refused one gets a result with its status like any other error. The results are not parsed on every
 * call (a fifth of a note's CPU time): they are checked where they are read, by clients such as the
 * SDK's own, and the tests run such a client over every tool. An instance registers nothing per tool:
 * it is built per connection, and per request of a 2026-07-28 client over HTTP.
 */
export function serveTools(server: McpServer, tools: readonly ToolDefinition[], host: ToolHost): void {
  const { options } = host;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  /** The caller; a public tool answers an unknown, revoked or expired token as anonymous. */
  const resolveCaller = async (tool: ToolDefinition, ctx: RequestContext): Promise<Caller> => {
    try {
      return await options.resolveCaller(ctx);
    } catch (error) {
      if (tool.permission === 'public' && isLiveMemError(error, 'forbidden')) return ANONYMOUS;
      throw error;
    }
  };
  const call = async (
    tool: ToolDefinition,
    args: Record<string, unknown>,
    ctx: RequestContext,
  ): Promise<CallToolResult | InputRequiredResult | CreatedTask> => {
    const progress = progressChannel(ctx);
    let caller: Caller | undefined;
    let forCaller: Offered = host.offered;
    // The client's model, made on the tool's first request for it: a background job outlives the request its rounds would come back on.
    const lends = host.lendsModel(ctx);
    let model: { llm: LlmClient } | ModelRounds | undefined;
    const clientModel = (use?: { background?: boolean }): LlmClient | undefined => {
      if (!lends || (use?.background && host.legacy === false)) return undefined;
      model ??= host.clientModel(tool, ctx);
      return model.llm;
    };
    const rounds = (): ModelRounds | undefined => (model && 'ask' in model ? model : undefined);
    try {
      caller = await resolveCaller(tool, ctx);
      const { profile, listed, offered: callerOffered } = host.offeredTo(caller, ctx);
      forCaller = callerOffered;
      const context: ToolContext = {
        core: options.core,
        caller,
        ctx,
        clientModel,
        reportProgress: progress.report,
        tools: { profile, count: listed.length },
        spaces: host.spaces,
        remote: options.remote === true,
        checkout: options.checkout ?? (async () => undefined),
        asTask: tool.task !== undefined && host.takesTasks(ctx),
        consolidation: { by: callerOffered.model || lends ? 'model' : 'agent', tool: offers(callerOffered, 'bank_consolidate') },
      };
      let result: Record<string, unknown>;
      try {
        result = await runTool(tool, args, context);
      } catch (error) {
        // Work stopped for an answer of the client's model ends in a new round, whatever error it left.
        const asked = rounds()?.ask(undefined);
        if (asked) return asked;
        throw error;
      }
      await progress.sent();
      const asked = rounds()?.ask(result);
      if (asked) return asked;
      if (context.asTask && typeof result.job_id === 'string') return createdTask(tool.name, result as Parameters<typeof createdTask>[1]);
      return toolResult(rounds()?.settle(result) ?? result);
    } catch (error) {
      // A missing space's error names the spaces near it this caller may see (the hint offers them).
      const shown = caller ? await withSimilarSpaces(options.core.context, caller, error) : error;
      // Whether a note would create the missing space depends on the caller (LIVE_MEM_AUTO_CREATE_SPACES=auto).
      return toolError(shown, options.logger, tool.name, {
        ...forCaller,
        autoCreateSpaces: caller !== undefined && options.core.notes.createsSpaces(caller),
      });
    }
  };
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const tool = byName.get(name);
    if (tool) {
      const answer = await call(tool, request.params.arguments ?? {}, ctx);
      if (isInputRequiredResult(answer)) return answer;
      // A task handle passes the SDK's tools/call check as it is (its result schema is open): the SDK has no type for it.
      if (answer.resultType === 'task') return answer as unknown as CallToolResult;
      return server.server.projectCallToolResult(answer as CallToolResult, undefined);
    }
    const unknown = `Tool ${name} not found`;
    // SDK v1's words: its McpError wrote "MCP error <code>: " into the text of the result.
    if (host.legacy) return { content: [{ type: 'text', text: `MCP error ${ProtocolErrorCode.InvalidParams}: ${unknown}` }], isError: true };
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, unknown);
  });
}
