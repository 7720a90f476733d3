import OpenAI from 'openai';
import { checkListed, listModels } from './listed-models.js';
import type { ChatRequest, ChatResponse, LlmClient } from './types.js';
import { LlmError } from './types.js';

export interface OpenAiSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
  temperature: number;
  maxTokens: number;
  contextWindow: number;
}

/**
 * Any OpenAI-compatible chat-completions endpoint: OpenAI, Ollama, vLLM, LM Studio, hosted
 * "LLM as a service". JSON mode is asked for when a call wants JSON; an endpoint that refuses the
 * parameter is remembered and asked without it (the prompt still says to answer in JSON).
 * Retries are not the SDK's: the shared call helper (call.ts) owns them, for every adapter alike.
 */
export function createOpenAiLlm(settings: OpenAiSettings): LlmClient {
  const client = new OpenAI({ baseURL: settings.baseUrl, apiKey: settings.apiKey || 'not-needed', maxRetries: 0, timeout: 24 * 3600 * 1000 });
  let jsonModeRefused = false;

  const send = async (request: ChatRequest, json: boolean): Promise<ChatResponse> => {
    const completion = await client.chat.completions.create(
      {
        model: settings.model,
        messages: request.messages,
        temperature: request.temperature ?? settings.temperature,
        max_tokens: request.maxTokens ?? settings.maxTokens,
        ...(json ? { response_format: { type: 'json_object' as const } } : {}),
      },
      request.signal ? { signal: request.signal } : {},
    );
    const choice = completion.choices[0];
    return {
      text: choice?.message?.content ?? '',
      model: completion.model || settings.model,
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
      usageReported: completion.usage != null,
      truncated: choice?.finish_reason === 'length',
    };
  };

  return {
    label: `${settings.model} @ ${settings.baseUrl}`,
    contextWindow: settings.contextWindow,
    maxOutputTokens: settings.maxTokens,
    async ping(signal) {
      checkListed(settings.model, await translate(() => listModels(client, signal)));
    },
    async chat(request) {
      const json = Boolean(request.json) && !jsonModeRefused;
      try {
        return await send(request, json);
      } catch (error) {
        if (json && error instanceof OpenAI.BadRequestError && /response_format|json/i.test(error.message)) {
          jsonModeRefused = true;
          return translate(() => send(request, false));
        }
        throw toLlmError(error);
      }
    },
  };
}

async function translate<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toLlmError(error);
  }
}

function toLlmError(error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmError('the model endpoint timed out', true, undefined, { cause: error });
  if (error instanceof OpenAI.APIUserAbortError) return new LlmError('the model call was aborted', true, undefined, { cause: error });
  if (error instanceof OpenAI.APIConnectionError) return new LlmError(`cannot reach the model endpoint: ${error.message}`, true, undefined, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const hint =
      status === 401 || status === 403 ? ' (check LIVE_MEM_LLM_API_KEY)' : status === 404 ? ' (check LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL)' : '';
    return new LlmError(`the model endpoint answered ${status ?? 'an error'}: ${error.message}${hint}`, retryable, status, { cause: error });
  }
  return new LlmError(`the model call failed: ${error instanceof Error ? error.message : String(error)}`, false, undefined, { cause: error });
}
