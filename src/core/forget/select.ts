import { invalid, LiveMemError } from '../../shared/errors.js';
import { isPlainFileName } from '../../shared/keys.js';
import type { Caller } from '../caller.js';
import { parseNoteName } from '../note-name.js';
import type { Corpus } from '../note/corpus.js';
import { MAX_SEARCH_LIMIT } from '../recall/recall-service.js';
import type { ForgetDeps, ForgetInput, Located } from './types.js';

/**
 * The notes a forget is about: the refs given or what a query finds (select), and where each is kept
 * now (locate) — live/ or the notes.json of the consolidation that took them. Nothing is forgotten
 * unless every note is found.
 */

/** At most this many notes in one forget (refs, or the notes a query selects). */
const MAX_FORGET = 1_000;
/** Notes a query selects by default (at most: what one search answers, MAX_SEARCH_LIMIT). */
const QUERY_LIMIT = 20;

/** The names to forget: the refs given (each must be a note file name), or what the query finds among notes. */
export async function selectNotes({ search }: ForgetDeps, caller: Caller, spaceId: string, input: ForgetInput): Promise<string[]> {
  const hasRefs = Array.isArray(input.refs) && input.refs.length > 0;
  const hasQuery = typeof input.query === 'string' && input.query.trim() !== '';
  if (hasRefs === hasQuery) throw invalid('give either refs (note file names) or a query, not both and not neither');
  if (hasQuery) {
    const limit = input.limit ?? QUERY_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw invalid(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
    // Exact: what a reader's search adds beside the words (the replies to a hit, notes near in meaning) is never selected.
    const found = await search(caller, { space_id: spaceId, query: (input.query as string).trim(), sources: ['live', 'history'], limit }, { exact: true });
    const names = [...new Set(found.results.map((hit) => hit.ref))];
    if (names.length === 0)
      throw new LiveMemError('not_found', `no note of '${spaceId}' matches ${JSON.stringify(input.query)}: nothing was forgotten`, { space_id: spaceId });
    return names;
  }
  const refs = [...new Set((input.refs as unknown[]).map((ref) => (typeof ref === 'string' ? ref.trim() : '')))];
  if (refs.length > MAX_FORGET) throw invalid(`at most ${MAX_FORGET} notes at once, got ${refs.length}`);
  const bad = refs.filter((ref) => !isPlainFileName(ref) || !parseNoteName(ref));
  if (bad.length > 0)
    throw invalid(
      `not a note file name: ${bad.map((ref) => JSON.stringify(ref)).join(', ')} (history_read, live_read and memory_search give them, e.g. 20260220T180000_alice_observation_1a2b3c4d.md)`,
    );
  return refs;
}

/** Where each note is kept now; `not_found` naming those that are nowhere (nothing changes). */
export async function locateNotes(corpus: Corpus, spaceId: string, names: readonly string[]): Promise<Located[]> {
  const level0 = new Map((await corpus.level0(spaceId)).map((note) => [note.filename, note]));
  const missing = names.filter((name) => !level0.has(name));
  if (missing.length > 0) {
    throw new LiveMemError('not_found', `no note ${missing.join(', ')} in space '${spaceId}' (live or consolidated): nothing was forgotten`, {
      space_id: spaceId,
      missing,
    });
  }
  return names.map((filename) => ({ filename, consolidation_id: level0.get(filename)?.consolidation_id ?? null }));
}

/** The consolidations holding any of the notes, each once. */
export const consolidationsOf = (located: readonly Located[]): string[] => [
  ...new Set(located.flatMap((note) => (note.consolidation_id ? [note.consolidation_id] : []))),
];
