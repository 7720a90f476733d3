import { isLiveMemError } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import type { LlmCalls } from '../../llm/call.js';
import type { CoreContext } from '../context.js';
import { newNonce, stripFenceEcho } from '../prompt-fence.js';
import type { WindowNote } from '../model-output/directives.js';
import { guardModelOutput } from '../model-output/model-output.js';
import { compressionMessages } from './prompt.js';

/** Sentences the compressed synthesis aims for (seed 001). */
const COMPRESSED_SENTENCES = 8;

export const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/**
 * A window's synthesis, compressed by one more model call when it is past the word limit. It is kept
 * whole if the call fails, returns nothing, or writes what the guards of model output refuse
 * (model-output/model-output.ts: the synthesis it replaces passed them, so must this); what may vouch for an order
 * it restates is the window's notes and that synthesis.
 */
export async function compressSynthesis(
  context: CoreContext,
  calls: LlmCalls,
  synthesis: string,
  notes: readonly WindowNote[],
  warnings: string[],
): Promise<{ text: string; compressed: boolean }> {
  if (countWords(synthesis) <= context.consolidation.synthesisMaxWords) return { text: synthesis, compressed: false };
  const nonce = newNonce();
  try {
    const response = await calls.chat({ messages: compressionMessages(synthesis, COMPRESSED_SENTENCES, nonce) });
    const text = normalizeLineEndings(stripFenceEcho(response.text, nonce).replace(/<think>[\s\S]*?<\/think>/gi, '')).trim();
    if (text) {
      const [passed] = guardModelOutput({
        subject: 'the compressed synthesis',
        nonce,
        texts: [{ where: 'the synthesis', before: synthesis, after: text }],
        sources: [...notes, { filename: 'the synthesis it compresses', content: synthesis }],
        redact: context.redact,
      });
      return { text: passed as string, compressed: true };
    }
    warnings.push('the synthesis compression returned nothing; the long synthesis was kept whole');
  } catch (error) {
    const refused = isLiveMemError(error, 'invalid_input');
    warnings.push(`the synthesis compression ${refused ? 'was refused' : 'failed'} (${(error as Error).message}); the long synthesis was kept whole`);
  }
  return { text: synthesis, compressed: false };
}
