import { LiveMemError } from '../shared/errors.js';
import type { LlmClient } from '../llm/types.js';
import type { CoreContext } from './context.js';

/**
 * The model an operation calls: the configured endpoint, else the one the call brought (MCP
 * sampling). Without either, `config_error` saying how to configure one and which tool samples.
 */
export function requireModel(context: CoreContext, override: LlmClient | undefined, what: string, tool: string): LlmClient {
  const llm = context.llm ?? override;
  if (!llm) {
    throw new LiveMemError(
      'config_error',
      `no LLM is configured for ${what}: set LIVE_MEM_LLM_BASE_URL, LIVE_MEM_LLM_MODEL and LIVE_MEM_LLM_API_KEY ` +
        `(any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, LM Studio…), or call ${tool} from an MCP client that supports sampling`,
    );
  }
  return llm;
}
