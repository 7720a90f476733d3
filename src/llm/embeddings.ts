import OpenAI from 'openai';
import { checkListed, listModels, type ModelListing } from './listed-models.js';
import { LlmError } from './types.js';

/**
 * The port to an embedding model, beside the chat port: semantic recall talks to this, never to a
 * vendor SDK, and tests script it over real HTTP.
 *
 * Contract: one vector per input, in the order of the inputs, all of one dimension and of unit
 * length (so cosine similarity is a dot product). Failures are `LlmError`s, `retryable` for 429,
 * 5xx, network and timeout; retrying is the caller's choice, the adapter does not retry.
 */
export interface EmbeddingsClient {
  /** For messages and index headers: "nomic-embed-text @ http://127.0.0.1:11434/v1". */
  readonly label: string;
  /** `report` is told what each request to the endpoint cost, as it answers (for the spend ledger). */
  embed(texts: string[], signal?: AbortSignal, report?: (usage: EmbeddingsUsage) => Promise<void>): Promise<Float32Array[]>;
  /** Checks the endpoint answers, without computing anything (listing models), and offers the model (ModelNotListed). Optional. */
  ping?(signal: AbortSignal): Promise<void>;
  /**
   * Documents the background indexer should send a call (default 64): a model run in this process
   * takes few, so that a call stays short on a slow CPU and a query run beside it does not wait long.
   */
  readonly batchSize?: number;
  /** Runs in this process (local-embeddings.ts): it costs no tokens, so no space's cap is charged for it. */
  readonly local?: boolean;
}

/** One request's cost: `reported` false when the endpoint said nothing (the tokens are then 0). */
export interface EmbeddingsUsage {
  model: string;
  promptTokens: number;
  reported: boolean;
  /** The inputs of that request, for an estimate when the endpoint reported nothing. */
  texts: string[];
}

export interface OpenAiEmbeddingsSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Inputs per request (default 64): small enough for local servers, few round trips for hosted ones. */
  batchSize?: number;
  /** Per request (default 60 s); a timeout is a retryable LlmError. */
  timeoutMs?: number;
}

/**
 * Any OpenAI-compatible `/embeddings` endpoint: OpenAI, Ollama, vLLM, LM Studio. `encoding_format`
 * is asked as `float` because the SDK's default (base64) is not served by every local server.
 * Batches are sent one after another, not at once: a local server computes them one at a time anyway.
 */
export function createOpenAiEmbeddings(settings: OpenAiEmbeddingsSettings): EmbeddingsClient {
  const batchSize = Math.max(1, Math.floor(settings.batchSize ?? 64));
  const client = new OpenAI({ baseURL: settings.baseUrl, apiKey: settings.apiKey || 'not-needed', maxRetries: 0, timeout: settings.timeoutMs ?? 60_000 });

  const embedBatch = async (texts: string[], signal: AbortSignal | undefined, report: EmbedReport | undefined): Promise<Float32Array[]> => {
    // OpenAI answers 400 to an empty string, which would fail the whole batch for one empty document.
    const input = texts.map((text) => (text === '' ? ' ' : text));
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await client.embeddings.create({ model: settings.model, input, encoding_format: 'float' }, signal ? { signal } : {});
    } catch (error) {
      throw toLlmError(error);
    }
    const tokens = response?.usage?.prompt_tokens;
    await report?.({ model: response?.model || settings.model, promptTokens: tokens ?? 0, reported: typeof tokens === 'number', texts });
    return inOrder(response, texts.length);
  };

  return {
    label: `${settings.model} @ ${settings.baseUrl}`,
    async ping(signal) {
      let listing: ModelListing;
      try {
        listing = await listModels(client, signal);
      } catch (error) {
        throw toLlmError(error);
      }
      checkListed(settings.model, listing);
    },
    async embed(texts, signal, report) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        vectors.push(...(await embedBatch(texts.slice(start, start + batchSize), signal, report)));
      }
      const dims = vectors[0]?.length;
      if (vectors.some((vector) => vector.length !== dims)) throw new LlmError('the embeddings endpoint answered vectors of different dimensions', false);
      return vectors;
    },
  };
}

type EmbedReport = (usage: EmbeddingsUsage) => Promise<void>;

/** The response's vectors by their `index` (the API's order promise), checked and normalised. */
function inOrder(response: OpenAI.CreateEmbeddingResponse, expected: number): Float32Array[] {
  const data = Array.isArray(response?.data) ? response.data : [];
  if (data.length !== expected) throw new LlmError(`the embeddings endpoint answered ${data.length} vectors for ${expected} inputs`, false);
  const vectors = new Array<Float32Array | undefined>(expected);
  data.forEach((item, position) => {
    const index = typeof item.index === 'number' ? item.index : position;
    const values = item.embedding as unknown;
    if (!Array.isArray(values) || values.length === 0 || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw new LlmError('the embeddings endpoint answered something that is not a vector of numbers', false);
    }
    if (index < 0 || index >= expected || vectors[index]) throw new LlmError(`the embeddings endpoint answered a bad index ${index}`, false);
    vectors[index] = normalised(values as number[]);
  });
  return vectors as Float32Array[];
}

/** Unit length, so cosine is a dot product; a zero vector stays zero (it is close to nothing). */
export function normalised(values: number[]): Float32Array {
  let sum = 0;
  for (const value of values) sum += value * value;
  const norm = Math.sqrt(sum);
  const vector = new Float32Array(values.length);
  if (norm > 0) for (let i = 0; i < values.length; i++) vector[i] = (values[i] as number) / norm;
  return vector;
}

function toLlmError(error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmError('the embeddings endpoint timed out', true, undefined, { cause: error });
  if (error instanceof OpenAI.APIUserAbortError) return new LlmError('the embeddings call was aborted', true, undefined, { cause: error });
  if (error instanceof OpenAI.APIConnectionError)
    return new LlmError(`cannot reach the embeddings endpoint: ${error.message}`, true, undefined, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const hint =
      status === 401 || status === 403
        ? ' (check LIVE_MEM_EMBEDDINGS_API_KEY)'
        : status === 404
          ? ' (check LIVE_MEM_EMBEDDINGS_BASE_URL and LIVE_MEM_EMBEDDINGS_MODEL)'
          : '';
    return new LlmError(`the embeddings endpoint answered ${status ?? 'an error'}: ${error.message}${hint}`, retryable, status, { cause: error });
  }
  return new LlmError(`the embeddings call failed: ${error instanceof Error ? error.message : String(error)}`, false, undefined, { cause: error });
}

/**
 * How far a space's index is embedded, as `space_info` shows it (`embeddings`): the model, and how many of
 * the index's documents have a vector. Recall reports it; the space service shows it.
 */
export interface EmbeddingsProgress {
  model: string;
  /**
   * `embedding` (under way, in the background), `ready` (every document has its vector), `paused` (the
   * model failed: tried again a minute later), `waiting` (the next search starts it), `not_loaded` (no
   * search of the space yet in this process: nothing counted).
   */
  state: 'embedding' | 'ready' | 'paused' | 'waiting' | 'not_loaded';
  documents?: number;
  embedded?: number;
  error?: string;
}
