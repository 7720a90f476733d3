import type { Server } from '@modelcontextprotocol/server';
import { createSamplingLlm } from '../llm/sampling.js';
import type { LlmClient } from '../llm/types.js';

/**
 * The connected client's own model as an LlmClient: each chat is an MCP sampling request
 * (sampling/createMessage) sent to the client; llm/sampling.ts maps the port onto it, and this side
 * owns the SDK call. Whether the client lends its model at all is the server's question (server.ts).
 */
export function clientSamplingModel(server: Server, limits: { contextWindow: number; maxOutputTokens: number }): LlmClient {
  return createSamplingLlm(async (request) => {
    const result = await server.createMessage(
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
}
