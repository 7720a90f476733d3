import { isLiveMemError, LiveMemError } from '../../../shared/errors.js';
import type { LlmCalls } from '../../../llm/call.js';
import type { ChatMessage } from '../../../llm/types.js';
import type { WindowNote } from '../../model-output/directives.js';
import { guardModelOutput } from '../../model-output/model-output.js';
import { ReplyFormatError } from '../../../llm/reply-json.js';
import type { CoreContext } from '../../context.js';
import { stripFenceEcho } from '../../prompt-fence.js';
import { parseSummaryReply, retryReminder, type SummaryReply } from './prompt.js';

/** One summary's prompt, its fences' nonce, and what may vouch for an order its summary restates (the texts summarised). */
export interface SummaryPrompt {
  messages: ChatMessage[];
  nonce: string;
  sources: WindowNote[];
}

/**
 * A summary is model text that is stored: every field of it passes the one gate of model output
 * (model-output/model-output.ts) — the prompt's fence lines it echoes dropped, a secret or an order no summarised
 * text vouches for refused. Returns the reply as it passed.
 */
function guardSummary(context: CoreContext, prompt: SummaryPrompt, reply: SummaryReply): SummaryReply {
  const lists = ['key_findings', 'topics', 'agents', 'files_mentioned'] as const;
  const texts = [reply.summary, ...lists.flatMap((list) => reply[list])];
  const passed = guardModelOutput({
    subject: 'the summary',
    nonce: prompt.nonce,
    texts: texts.map((after) => ({ where: 'the summary', before: '', after })),
    sources: prompt.sources,
    redact: context.redact,
  });
  let at = 1;
  const next = (list: (typeof lists)[number]) => reply[list].map(() => passed[at++] as string);
  return {
    summary: passed[0] as string,
    key_findings: next('key_findings'),
    topics: next('topics'),
    agents: next('agents'),
    files_mentioned: next('files_mentioned'),
  };
}

/** Asks for one summary; a reply that is empty, not the JSON asked for, or refused by the guards gets one more chance. */
export async function askSummary(context: CoreContext, calls: LlmCalls, prompt: SummaryPrompt): Promise<{ reply: SummaryReply; model: string }> {
  let last: Error | undefined;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const messages = last ? [...prompt.messages, retryReminder(last.message, prompt.nonce)] : prompt.messages;
    const response = await calls.chat({ messages, json: true });
    try {
      if (response.truncated) throw new ReplyFormatError('the reply was cut by the token limit');
      return { reply: guardSummary(context, prompt, parseSummaryReply(stripFenceEcho(response.text, prompt.nonce))), model: response.model };
    } catch (error) {
      if (!(error instanceof ReplyFormatError) && !isLiveMemError(error, 'invalid_input')) throw error;
      last = error;
    }
  }
  // Refused by a guard the second time: the refusal says why (never a secret).
  if (isLiveMemError(last, 'invalid_input')) throw last;
  throw new LiveMemError('llm_error', `the model returned no usable summary twice (${last?.message})`);
}
