import type { CreateMessageRequestParams, CreateMessageResult, Server } from '@modelcontextprotocol/server';
import { createSamplingLlm, type SamplingRequest, type SamplingResult } from '../llm/sampling.js';
import type { LlmClient } from '../llm/types.js';

/** What the client's model is assumed to take and give when nothing says more (settings: LIVE_MEM_LLM_*). */
export interface ModelLimits {
  contextWindow: number;
  maxOutputTokens: number;
}

/** A sampling request as MCP carries it (sampling/createMessage), in either era: pushed (2025) or embedded in input_required (2026-07-28). */
export function samplingParams(request: Omit<SamplingRequest, 'signal'>): CreateMessageRequestParams {
  return {
    systemPrompt: request.systemPrompt,
    messages: request.messages.map((m) => ({ role: m.role, content: { type: 'text' as const, text: m.text } })),
    maxTokens: request.maxTokens,
    includeContext: 'none',
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  };
}

/** The client's answer to a sampling request, read the same way in either era. */
export function samplingAnswer(result: Pick<CreateMessageResult, 'model' | 'stopReason'> & { content: unknown }): SamplingResult {
  const content = (Array.isArray(result.content) ? result.content[0] : result.content) as { type?: unknown; text?: unknown } | undefined;
  return {
    text: content?.type === 'text' && typeof content.text === 'string' ? content.text : '',
    model: typeof result.model === 'string' ? result.model : 'the client model',
    truncated: result.stopReason === 'maxTokens',
  };
}

/**
 * The connected client's own model as an LlmClient, in the 2025 era: each chat is an MCP sampling
 * request (sampling/createMessage) pushed to the client; llm/sampling.ts maps the port onto it, and
 * this side owns the SDK call. A 2026-07-28 client is asked through input_required instead
 * (model-rounds.ts). Whether the client lends its model at all is the server's question (server.ts).
 */
export function clientSamplingModel(server: Server, limits: ModelLimits): LlmClient {
  return createSamplingLlm(async (request) => {
    const result = await server.createMessage(
      samplingParams(request),
      // The shared call helper owns the timeout (through the signal); the SDK's 60 s default must not cut first.
      { ...(request.signal ? { signal: request.signal } : {}), timeout: 24 * 3600 * 1000 },
    );
    return samplingAnswer(result);
  }, limits);
}
