import type { Session } from '../open.js';
import { readStdin } from '../stdin.js';

/** The note's content: the arguments joined, or standard input when they are absent or '-'. */
async function contentFrom(words: string[]): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ');
  return readStdin('the note');
}

export async function note({ core, caller }: Session, spaceId: string, words: string[], options: { category: string; tags?: string; agent?: string }) {
  return core.notes.write(caller, {
    space_id: spaceId,
    category: options.category,
    content: await contentFrom(words),
    ...(options.tags !== undefined ? { tags: options.tags } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
  });
}

export const read = ({ core, caller }: Session, spaceId: string, options: { limit: number; category?: string; agent?: string; since?: string }) =>
  core.notes.read(caller, {
    space_id: spaceId,
    limit: options.limit,
    ...(options.category !== undefined ? { category: options.category } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.since !== undefined ? { since: options.since } : {}),
  });

export const search = ({ core, caller }: Session, spaceId: string, query: string, options: { limit: number }) =>
  core.notes.search(caller, { space_id: spaceId, query, limit: options.limit });
