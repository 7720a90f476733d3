import type { LlmCalls } from '../../llm/call.js';
import { ReplyFormatError } from '../../llm/reply-json.js';
import type { ChatMessage, LlmClient } from '../../llm/types.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { measureTokens } from '../bank/budget.js';
import type { CoreContext } from '../context.js';
import { newNonce, stripFenceEcho } from '../prompt-fence.js';
import { checkDigests, type Digest, targetTokens } from './guards.js';
import { compactionMessages, parseDigests, retryReminder } from './prompt.js';
import { RETENTION_GUARD, retainedReminder } from './retention-guard.js';
import type { SplitFile } from './sections.js';

/**
 * One bank file's conversation with the model: the digests of its older sections asked for, and
 * checked by the guards (guards.ts) before the run (run.ts) may write anything. Its own module
 * because the retries — a cut or malformed reply, digests that drop facts — are this step's
 * business, not the run's.
 */

/** Asks for digests; a cut or malformed reply gets one more chance with a reminder. `after`: what was said since the prompt. */
async function askDigests(calls: LlmCalls, file: SplitFile, nonce: string, after: ChatMessage[] = []): Promise<Digest[]> {
  const messages = [...compactionMessages(file, targetTokens(file.budget), nonce), ...after];
  let problem = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    const response = await calls.chat({ messages: attempt === 1 ? messages : [...messages, retryReminder(problem, nonce)], json: true });
    try {
      if (response.truncated) throw new ReplyFormatError('the reply was cut by the token limit');
      // The prompt's own fence lines copied into the reply are an echo: dropped (prompt-fence.ts).
      return parseDigests(stripFenceEcho(response.text, nonce));
    } catch (error) {
      if (!(error instanceof ReplyFormatError)) throw error;
      problem = error.message;
    }
  }
  throw new LiveMemError('llm_error', `the model returned no usable digests twice (${problem})`);
}

/** One file: its digests, checked. Throws what refuses them. */
export async function digestFile(context: CoreContext, calls: LlmCalls, llm: LlmClient, file: SplitFile) {
  if (file.sections.length === 0) throw invalid(`${file.filename} has no section under a heading to digest`);
  const promptTokens = compactionMessages(file, 0).reduce((sum, m) => sum + measureTokens(m.content), 0);
  if (promptTokens + llm.maxOutputTokens > llm.contextWindow) {
    throw invalid(
      `${file.filename} (${file.tokens} tokens) does not fit the model's context in one request (${llm.contextWindow} tokens, ${llm.maxOutputTokens} reserved for the reply): raise LIVE_MEM_LLM_CONTEXT_WINDOW or use a model with a larger one`,
    );
  }
  const nonce = newNonce();
  const guards = { nonce, redact: context.redact, retention: context.retention };
  try {
    return checkDigests(file, await askDigests(calls, file, nonce), guards);
  } catch (error) {
    // Digests that drop facts the file had room for are asked for once more (LIVE_MEM_RETENTION=retry), told which.
    if (context.retention !== 'retry' || !isLiveMemError(error, 'invalid_input') || error.data.guard !== RETENTION_GUARD) throw error;
    return checkDigests(file, await askDigests(calls, file, nonce, [retainedReminder(error.message, nonce)]), guards);
  }
}
