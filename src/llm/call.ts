import type { ChatRequest, ChatResponse, LlmClient } from './types.js';
import { LlmError } from './types.js';

/** Tokens spent, summed over every call made through one `LlmCalls`. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  calls: number;
}

export interface CallOptions {
  /** Per-call timeout. */
  timeoutMs: number;
  /** Attempts for a retryable failure (429, 5xx, network, timeout), the first included. */
  attempts?: number;
  /** Base backoff; doubled at each attempt, with jitter. */
  backoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Sees every attempt (the spend ledger and its caps, in the core). */
  meter?: CallMeter;
}

/**
 * What the caller wants done around each attempt, without this layer knowing what it is: `begin`
 * may refuse the attempt by throwing (nothing is sent, no retry); what it returns is told how the
 * attempt ended. `answered` is awaited once the endpoint answered, before the answer is used, so
 * what was paid is recorded even if the process dies right after; then, as after a failed attempt
 * (no endpoint says what one cost), `ended`.
 */
export interface CallMeter {
  begin(request: ChatRequest, maxOutputTokens: number): Promise<MeteredAttempt>;
}

export interface MeteredAttempt {
  answered?(response: ChatResponse): Promise<void>;
  ended?(): Promise<void>;
}

/**
 * The shared way to call the model (seed 001): a timeout per call, retries with backoff for
 * retryable failures, and token accounting. Every LLM call of live-mem goes through one of these.
 */
export function createLlmCalls(llm: LlmClient, options: CallOptions) {
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, calls: 0 };
  const attempts = Math.max(1, options.attempts ?? 3);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  const once = async (request: ChatRequest): Promise<ChatResponse> => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    try {
      return await llm.chat({ ...request, signal });
    } catch (error) {
      if (timeout.aborted && !request.signal?.aborted) {
        throw new LlmError(`the model did not answer within ${Math.round(options.timeoutMs / 1000)} s`, true, undefined, { cause: error });
      }
      throw error;
    }
  };

  return {
    usage,
    llm,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      for (let attempt = 1; ; attempt++) {
        // A refusal is no call: it is thrown as it is, never retried.
        const metered = await options.meter?.begin(request, request.maxTokens ?? llm.maxOutputTokens);
        let response: ChatResponse;
        try {
          response = await once(request);
        } catch (error) {
          usage.calls++;
          await metered?.ended?.();
          const retryable = error instanceof LlmError ? error.retryable : false;
          if (!retryable || attempt >= attempts || request.signal?.aborted) throw error;
          await sleep((options.backoffMs ?? 500) * 2 ** (attempt - 1) * (0.5 + Math.random()));
          continue;
        }
        usage.calls++;
        usage.promptTokens += response.promptTokens;
        usage.completionTokens += response.completionTokens;
        try {
          await metered?.answered?.(response);
        } finally {
          await metered?.ended?.();
        }
        return response;
      }
    },
  };
}

export type LlmCalls = ReturnType<typeof createLlmCalls>;
