import { LiveMemError } from '../shared/errors.js';
import type { LlmClient } from '../llm/types.js';
import type { CoreContext } from './context.js';

/** Where connecting a model is explained whole (the package ships no docs/, so the page is the repository's). */
export const MODEL_DOCS = 'https://github.com/chrlesur/live-mem/blob/main/docs/model.md';

/**
 * What a person sets to give live-mem a model, said the same way by every place that finds none
 * (a refused consolidation, doctor, system_health): the settings by name, where they go, the page.
 * Written for a person, not an agent: an agent can only pass it on. MCP sampling is not offered as
 * the way out: it is the client's to give, and the common clients do not (docs/model.md).
 */
export const MODEL_FIX =
  "run `live-mem setup model --base-url URL --model NAME` once (it writes llm: into live-mem.yaml, which every client's live-mem reads), " +
  'or set LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL (and LIVE_MEM_LLM_API_KEY if the endpoint needs a key) where live-mem runs; ' +
  `then start it again. Any OpenAI-compatible endpoint works (OpenAI, Anthropic, Ollama, vLLM…): ${MODEL_DOCS}. ` +
  'Without one, an agent writes the plan itself (bank_consolidate answers it a work package), and so can any model you have: ' +
  '`live-mem consolidate SPACE --prepare`, then `--plan FILE --handle HANDLE`';

/**
 * MODEL_FIX for a client of a server on another machine (HTTP): the model is the server's, set where
 * it runs; nothing its client's person sets on their own machine changes it. The MCP shell says this
 * one to such clients (mcp/result.ts).
 */
export const MODEL_FIX_REMOTE =
  'ask whoever runs this live-mem server to give it a model: `live-mem setup model --base-url URL --model NAME` run on the server ' +
  '(or LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL in its environment), then a restart of the server; nothing set on your own machine changes it. ' +
  `Any OpenAI-compatible endpoint works (OpenAI, Anthropic, Ollama, vLLM…): ${MODEL_DOCS}`;

/**
 * The model an operation calls: the configured endpoint, else the one the call brought (MCP
 * sampling). Without either, `config_error` saying what to set (MODEL_FIX).
 */
export function requireModel(context: CoreContext, override: LlmClient | undefined, what: string): LlmClient {
  const llm = context.llm ?? override;
  if (!llm) throw new LiveMemError('config_error', `no model is configured for ${what}: ${MODEL_FIX}`);
  return llm;
}
