/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1: real HTTP, so the real
 * `openai` client is in the path. Each request takes the next step of the scenario (the last step
 * repeats); every request body is recorded for assertions.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAiLlm } from '../../src/llm/openai.js';
import type { LlmClient } from '../../src/llm/types.js';

export type Step =
  /** A 200 answer with this message content. */
  | { reply: string; finishReason?: 'stop' | 'length'; usage?: { prompt: number; completion: number } }
  /** An HTTP error status (429, 500…), with an optional error message. */
  | { status: number; message?: string }
  /** Answer only after this delay (to provoke timeouts), then with `then` (default: an empty reply). */
  | { delayMs: number; then?: Step }
  /** Answer only once `until` settles (a condition of the test, however long it takes), then with `then`. */
  | { until: Promise<unknown>; then?: Step }
  /** Compute the reply from the request's messages. */
  | { dynamic: (messages: Array<{ role: string; content: string }>) => string };

export interface RecordedRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string };
  max_tokens?: number;
  temperature?: number;
}

export interface ScriptedLlm {
  url: string;
  requests: RecordedRequest[];
  /** The Authorization header of each chat request, in request order (the key a process was given). */
  authorizations: Array<string | undefined>;
  /** The usage each answered request reported, in answer order (what the model would bill). */
  usages: Array<{ prompt: number; completion: number }>;
  /** GET /models calls (health checks: they cost no tokens). */
  modelListings: number;
  /** Makes a client of the real adapter for this server. */
  client(options?: { contextWindow?: number; maxTokens?: number }): LlmClient;
  /** The settings that point a spawned live-mem process at this server. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/** `models`: what GET /models lists (default: the model `env()` and `client()` name). */
export async function startScriptedLlm(steps: Step[], options: { models?: string[] } = {}): Promise<ScriptedLlm> {
  const models = options.models ?? ['scripted-model'];
  const requests: RecordedRequest[] = [];
  const authorizations: Array<string | undefined> = [];
  const usages: Array<{ prompt: number; completion: number }> = [];
  const counters = { modelListings: 0 };
  let next = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        counters.modelListings++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'test' })) }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const request = JSON.parse(body) as RecordedRequest;
      requests.push(request);
      authorizations.push(req.headers.authorization);
      const step = steps[Math.min(next++, steps.length - 1)] as Step;
      void answer(step, request, res);
    });
  });
  const answer = async (step: Step, request: RecordedRequest, res: import('node:http').ServerResponse): Promise<void> => {
    if ('delayMs' in step || 'until' in step) {
      await ('until' in step ? step.until.catch(() => undefined) : new Promise((resolve) => setTimeout(resolve, step.delayMs)));
      if (res.destroyed || res.socket?.destroyed) return;
      return answer(step.then ?? { reply: '' }, request, res);
    }
    if ('status' in step) {
      res
        .writeHead(step.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: step.message ?? `scripted ${step.status}`, type: 'scripted' } }));
      return;
    }
    const content = 'dynamic' in step ? step.dynamic(request.messages) : step.reply;
    const usage =
      'usage' in step && step.usage
        ? step.usage
        : { prompt: Math.ceil(JSON.stringify(request.messages).length / 4), completion: Math.ceil(content.length / 4) };
    usages.push(usage);
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [
          { index: 0, message: { role: 'assistant', content }, finish_reason: 'finishReason' in step && step.finishReason ? step.finishReason : 'stop' },
        ],
        usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
      }),
    );
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    authorizations,
    usages,
    get modelListings() {
      return counters.modelListings;
    },
    env: () => ({ LIVE_MEM_LLM_BASE_URL: url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' }),
    client: (options = {}) =>
      createOpenAiLlm({
        baseUrl: url,
        apiKey: 'test-key',
        model: 'scripted-model',
        temperature: 0.3,
        maxTokens: options.maxTokens ?? 4_000,
        contextWindow: options.contextWindow ?? 100_000,
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
