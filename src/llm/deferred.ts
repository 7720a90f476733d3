import type { ChatRequest, ChatResponse, LlmClient } from './types.js';

/**
 * A client whose adapter is imported on its first call: the `openai` package then costs nothing to
 * a process that never consolidates (every MCP server start, every shell command).
 */
export function deferredLlm(describe: Pick<LlmClient, 'label' | 'contextWindow' | 'maxOutputTokens'>, load: () => Promise<LlmClient>): LlmClient {
  let loaded: Promise<LlmClient> | undefined;
  return {
    ...describe,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      loaded ??= load();
      return (await loaded).chat(request);
    },
    async ping(signal: AbortSignal): Promise<void> {
      loaded ??= load();
      await (await loaded).ping?.(signal);
    },
  };
}
