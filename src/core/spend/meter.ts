import { createLlmCalls, type CallMeter, type LlmCalls } from '../../llm/call.js';
import type { EmbeddingsClient } from '../../llm/embeddings.js';
import type { ChatRequest, LlmClient } from '../../llm/types.js';
import type { CoreContext } from '../context.js';
import { estimateTokens } from '../tokens.js';
import type { SpendPurpose } from './ledger.js';

/** Whom a model call is paid for, and why: what every model call of the core passes. */
export interface SpendTag {
  spaceId: string;
  purpose: SpendPurpose;
}

const promptEstimate = (request: ChatRequest): number => request.messages.reduce((sum, message) => sum + estimateTokens(message.content) + 4, 0);

/**
 * The meter of the space's calls: before each, the daily cap (prompt estimate + most output);
 * after each, a record of what the endpoint says it cost (or the estimate, marked so, when it
 * says nothing). A record that cannot be written is logged, never the call's failure: the model
 * has answered and its answer is worth keeping.
 */
export function chatMeter(context: CoreContext, tag: SpendTag): CallMeter {
  return {
    before: (request, maxOutputTokens) => context.spend.check(tag.spaceId, promptEstimate(request) + maxOutputTokens, tag.purpose),
    async after(request, response) {
      const reported = response.usageReported ?? response.promptTokens + response.completionTokens > 0;
      await record(context, tag, {
        model: response.model,
        prompt_tokens: reported ? response.promptTokens : promptEstimate(request),
        completion_tokens: reported ? response.completionTokens : estimateTokens(response.text),
        estimated: !reported,
      });
    },
  };
}

/** The one way the core makes chat calls: the shared call helper, metered for `tag`. */
export function meteredCalls(context: CoreContext, llm: LlmClient, tag: SpendTag): LlmCalls {
  return createLlmCalls(llm, { timeoutMs: context.consolidation.timeoutMs, backoffMs: context.consolidation.retryBackoffMs, meter: chatMeter(context, tag) });
}

/** Embeds `texts` for a space: refused past its cap, each request to the endpoint recorded. */
export async function meteredEmbed(context: CoreContext, embeddings: EmbeddingsClient, spaceId: string, texts: string[], signal?: AbortSignal) {
  const tag: SpendTag = { spaceId, purpose: 'embeddings' };
  await context.spend.check(
    spaceId,
    texts.reduce((sum, text) => sum + estimateTokens(text), 0),
    'embeddings',
  );
  return embeddings.embed(texts, signal, (usage) =>
    record(context, tag, {
      model: usage.model,
      prompt_tokens: usage.reported ? usage.promptTokens : usage.texts.reduce((sum, text) => sum + estimateTokens(text), 0),
      completion_tokens: 0,
      estimated: !usage.reported,
    }),
  );
}

async function record(
  context: CoreContext,
  tag: SpendTag,
  cost: { model: string; prompt_tokens: number; completion_tokens: number; estimated: boolean },
): Promise<void> {
  try {
    await context.spend.record(tag.spaceId, {
      at: context.clock().toISOString(),
      purpose: tag.purpose,
      model: cost.model,
      prompt_tokens: cost.prompt_tokens,
      completion_tokens: cost.completion_tokens,
      calls: 1,
      ...(cost.estimated ? { estimated: true } : {}),
    });
  } catch (error) {
    context.logger.warn(`could not record a ${tag.purpose} model call of '${tag.spaceId}' in its spend ledger`, { error: String(error) });
  }
}
