import type { ChatRequest, ChatResponse, LlmClient } from './types.js';

/**
 * The connected MCP client's own model, through MCP sampling. The MCP layer supplies `sample`
 * (it owns the SDK); this adapter only maps the port onto it.
 */
export interface SamplingRequest {
  systemPrompt: string;
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  maxTokens: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface SamplingResult {
  text: string;
  model: string;
  truncated: boolean;
}

export function createSamplingLlm(
  sample: (request: SamplingRequest) => Promise<SamplingResult>,
  limits: { contextWindow: number; maxOutputTokens: number },
): LlmClient {
  return {
    label: 'the MCP client (sampling)',
    contextWindow: limits.contextWindow,
    maxOutputTokens: limits.maxOutputTokens,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      const system = request.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const result = await sample({
        systemPrompt: system,
        messages: request.messages.flatMap((m) => (m.role === 'system' ? [] : [{ role: m.role, text: m.content }])),
        maxTokens: request.maxTokens ?? limits.maxOutputTokens,
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      // Sampling reports no token counts: they are estimated by the caller when needed.
      return { text: result.text, model: result.model, promptTokens: 0, completionTokens: 0, usageReported: false, truncated: result.truncated };
    },
  };
}
