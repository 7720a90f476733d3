import { createLlmCalls, type CallMeter, type LlmCalls } from '../../llm/call.js';
import type { EmbeddingsClient } from '../../llm/embeddings.js';
import type { ChatRequest, LlmClient } from '../../llm/types.js';
import type { CoreContext, Reservation, SpendCost, SpendPurpose } from '../context.js';
import { estimateTokens } from '../tokens.js';

/** Whom a model call is paid for, and why: what every model call of the core passes. */
export interface SpendTag {
  spaceId: string;
  purpose: SpendPurpose;
}

const promptEstimate = (request: ChatRequest): number => request.messages.reduce((sum, message) => sum + estimateTokens(message.content) + 4, 0);

/**
 * The meter of the space's calls: before each, a claim on the daily cap of its prompt estimate and
 * most output (reserve.ts: refused when it does not fit with what is spent and claimed);
 * once answered, a record of what the endpoint says it cost (or the estimate, marked so, when it
 * says nothing) in place of the claim. A record that cannot be written is logged, never the call's
 * failure: the model has answered and its answer is worth keeping.
 */
export function chatMeter(context: CoreContext, tag: SpendTag): CallMeter {
  return {
    async begin(request, maxOutputTokens) {
      const reservation = await context.spend.reserve(tag.spaceId, promptEstimate(request) + maxOutputTokens, tag.purpose, context.consolidation.timeoutMs);
      return {
        async answered(response) {
          const reported = response.usageReported ?? response.promptTokens + response.completionTokens > 0;
          await record(context, tag, reservation, {
            model: response.model,
            prompt_tokens: reported ? response.promptTokens : promptEstimate(request),
            completion_tokens: reported ? response.completionTokens : estimateTokens(response.text),
            estimated: !reported,
          });
        },
        ended: () => reservation.release(),
      };
    },
  };
}

/** The one way the core makes chat calls: the shared call helper, metered for `tag`. */
export function meteredCalls(context: CoreContext, llm: LlmClient, tag: SpendTag): LlmCalls {
  return createLlmCalls(llm, { timeoutMs: context.consolidation.timeoutMs, backoffMs: context.consolidation.retryBackoffMs, meter: chatMeter(context, tag) });
}

/**
 * Embeds `texts` for a space (`embeddings` for an index's documents, `search` for a query): claimed
 * on the cap before the first request (refused past it), each request to the endpoint recorded as it
 * answers. `timeoutMs` bounds the whole call, as `signal` does.
 */
export async function meteredEmbed(
  context: CoreContext,
  embeddings: EmbeddingsClient,
  tag: SpendTag,
  texts: string[],
  timeoutMs: number,
): Promise<Float32Array[]> {
  if (embeddings.local) return embeddings.embed(texts, AbortSignal.timeout(timeoutMs)); // no tokens paid for
  const estimate = texts.reduce((sum, text) => sum + estimateTokens(text), 0);
  const reservation = await context.spend.reserve(tag.spaceId, estimate, tag.purpose, timeoutMs);
  try {
    return await embeddings.embed(texts, AbortSignal.timeout(timeoutMs), (usage) =>
      record(context, tag, reservation, {
        model: usage.model,
        prompt_tokens: usage.reported ? usage.promptTokens : usage.texts.reduce((sum, text) => sum + estimateTokens(text), 0),
        completion_tokens: 0,
        estimated: !usage.reported,
      }),
    );
  } finally {
    await reservation.release();
  }
}

async function record(context: CoreContext, tag: SpendTag, reservation: Reservation, cost: SpendCost): Promise<void> {
  try {
    await reservation.record(cost);
  } catch (error) {
    context.logger.warn(`could not record a ${tag.purpose} model call of '${tag.spaceId}' in its spend ledger`, { error: String(error) });
  }
}
