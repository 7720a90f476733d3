import { ModelNotListed } from '../../llm/types.js';
import type { CoreContext } from '../context.js';
import { MODEL_FIX } from '../model.js';
import { failure, type Finding } from './doctor-space.js';

/** How long an endpoint has to answer the doctor's ping before it is said not to. */
const CHECK_TIMEOUT_MS = 5_000;

/**
 * The doctor's question to the model (`llm`) or embeddings endpoint: is one configured, and does it
 * answer a ping that spends no tokens. No model is a warning, never a pass; an endpoint that answers
 * but does not list the configured model says which setting to change.
 */
export async function checkEndpoint(context: CoreContext, what: 'llm' | 'embeddings'): Promise<Finding> {
  const client = what === 'llm' ? context.llm : context.embeddings;
  const names =
    what === 'llm'
      ? 'LIVE_MEM_LLM_BASE_URL, LIVE_MEM_LLM_API_KEY and LIVE_MEM_LLM_MODEL'
      : context.embeddings?.local
        ? 'LIVE_MEM_EMBEDDINGS_LOCAL and _LOCAL_DIR, and that @huggingface/transformers is installed beside live-mem'
        : 'LIVE_MEM_EMBEDDINGS_BASE_URL, _API_KEY and _MODEL';
  // No model is a warning, never a pass: without one the bank never forms. Whether an MCP client
  // lends its own (sampling) is known only to a server it is connected to, never to this check.
  if (!client && what === 'llm')
    return {
      check: what,
      status: 'warn',
      fixable: false,
      message:
        'no model configured: consolidation, compaction and summaries cannot run, so the memory bank stays empty ' +
        '(only an MCP client that offers sampling can lend its own model, to its own calls)',
      hint: MODEL_FIX,
    };
  if (!client) return { check: what, status: 'ok', fixable: false, message: 'no embeddings endpoint configured: search is BM25 alone' };
  if (!client.ping) return { check: what, status: 'ok', fixable: false, message: `${client.label} (not checked: it cannot be without spending tokens)` };
  const start = context.monotonic();
  try {
    await client.ping(AbortSignal.timeout(CHECK_TIMEOUT_MS));
    return {
      check: what,
      status: 'ok',
      fixable: false,
      message: `${client.label} ${what === 'embeddings' && context.embeddings?.local ? 'loads' : 'answers'} (${Math.round(context.monotonic() - start)} ms)`,
    };
  } catch (error) {
    const fallback = what === 'embeddings' ? ' (search falls back to BM25 meanwhile)' : '';
    // It answers, but every call naming this model would be refused: the setting is what to change.
    const unlisted = error instanceof ModelNotListed;
    const setting = what === 'llm' ? 'LIVE_MEM_LLM_MODEL (llm.model in live-mem.yaml)' : 'LIVE_MEM_EMBEDDINGS_MODEL (embeddings.model)';
    return {
      check: what,
      status: what === 'llm' ? 'error' : 'warn',
      fixable: false,
      message: `${client.label} ${unlisted ? 'answers, but' : 'does not answer:'} ${failure(error)}${fallback}`,
      hint: unlisted ? `set ${setting} to a model it lists${error.nearest ? ` (did you mean '${error.nearest}'?)` : ''}` : `check ${names}`,
    };
  }
}
