/**
 * The one port to a language model. Consolidation (and later features) talk to this, never to a
 * vendor SDK: the OpenAI-compatible adapter and MCP sampling both implement it, and tests script it
 * over real HTTP.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Ask for a JSON object reply (JSON mode where the endpoint supports it; never required). */
  json?: boolean;
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface ChatResponse {
  text: string;
  model: string;
  /** Token counts as reported by the endpoint (0 when it does not say). */
  promptTokens: number;
  completionTokens: number;
  /** False when the endpoint reported no token counts (the counts above are then 0). */
  usageReported?: boolean;
  /** True when the reply was cut by the token limit (finish_reason "length"). */
  truncated: boolean;
}

export interface LlmClient {
  /** For messages and metrics: "openai:gpt-4o-mini @ https://…", "sampling". */
  readonly label: string;
  /** Tokens the model sees at once (prompt + reply). */
  readonly contextWindow: number;
  /** Tokens reserved for the reply. */
  readonly maxOutputTokens: number;
  chat(request: ChatRequest): Promise<ChatResponse>;
  /**
   * Checks the endpoint answers, without spending tokens (listing models), and offers the configured
   * model (ModelNotListed when its listing lacks it). Optional.
   */
  ping?(signal: AbortSignal): Promise<void>;
}

/** An error from the model's side, with whether trying again may help (429, 5xx, network, timeout). */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The endpoint answers, but its model listing (GET /models) lacks the configured model: every call
 * naming it would be refused. Not retryable: the setting is what must change.
 */
export class ModelNotListed extends LlmError {
  constructor(
    readonly model: string,
    readonly listed: readonly string[],
    /** The listed id nearest to `model`, when one is near enough to be what was meant. */
    readonly nearest: string | undefined,
  ) {
    const shown = listed.length > 8 ? `${listed.slice(0, 8).join(', ')}…` : listed.join(', ');
    super(`the endpoint does not list the model '${model}' among its ${listed.length} (GET /models: ${shown})`, false);
  }
}
