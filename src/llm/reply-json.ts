import { normalizeLineEndings } from '../shared/line-endings.js';

/**
 * A model's reply read as JSON: the one reader every caller that asks a model for JSON uses (a
 * consolidation's plan, a compaction's digests, a summary, a section edit).
 */

/** A reply that is not what was asked for (bad JSON or the wrong shape): the model may do better if asked again. */
export class ReplyFormatError extends Error {
  override readonly name = 'ReplyFormatError';
}

/** Drops <think> blocks and code fences, and keeps the outermost JSON object. */
export function extractJson(reply: string): string {
  let text = reply.replace(/<think>[\s\S]*?<\/think>/gi, '').replace(/^[\s\S]*<\/think>/i, '');
  const fenced = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(text);
  if (fenced?.[1]?.includes('{')) text = fenced[1];
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new ReplyFormatError('the reply holds no JSON object');
  return text.slice(start, end + 1);
}

/**
 * The JSON value of a model's reply (see extractJson); a ReplyFormatError when there is none. Every
 * string in it has its line endings normalised (a model may answer `\r\n`): what it says is stored.
 */
export function replyJson(reply: string): unknown {
  try {
    return JSON.parse(extractJson(reply), (_key, value: unknown) => (typeof value === 'string' ? normalizeLineEndings(value) : value));
  } catch (error) {
    if (error instanceof ReplyFormatError) throw error;
    throw new ReplyFormatError(`the reply is not valid JSON (${(error as Error).message})`);
  }
}
