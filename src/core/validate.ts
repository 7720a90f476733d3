import { invalid } from '../shared/errors.js';
import { isPlainFileName } from '../shared/keys.js';

export const SPACE_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

export const CATEGORIES = ['observation', 'decision', 'todo', 'insight', 'question', 'progress', 'issue'] as const;
export type Category = (typeof CATEGORIES)[number];

export function validateSpaceId(spaceId: string): string {
  if (typeof spaceId !== 'string' || !SPACE_ID_PATTERN.test(spaceId)) {
    throw invalid(`invalid space_id ${JSON.stringify(spaceId)}: 1-64 characters, letters, digits, '_' or '-', starting with a letter or digit`);
  }
  return spaceId;
}

export function validateCategory(category: string): Category {
  if (!(CATEGORIES as readonly string[]).includes(category)) {
    throw invalid(`unknown category ${JSON.stringify(category)}: use one of ${CATEGORIES.join(', ')}`);
  }
  return category as Category;
}

/** A bank file name is a plain `name.md`: no folders, no '..', no control or invisible characters. */
export function validateBankFilename(filename: string): string {
  if (typeof filename !== 'string' || !isPlainFileName(filename) || !filename.endsWith('.md') || filename.length < 4) {
    throw invalid(`invalid bank filename ${JSON.stringify(filename)}: use a plain name ending in .md, without folders or '..'`);
  }
  return filename;
}

/**
 * Longest search query accepted, in characters. Past a few sentences a query adds nothing to a
 * ranking, and every character is tokenised, stemmed and matched against the index: a 4 MB query
 * held the event loop for seconds, stalling every other request of the process.
 */
export const MAX_QUERY_CHARS = 4_000;

/** A free-text search query, trimmed; empty or too long is refused before any work. */
export function validateQuery(query: unknown, options: { optional?: boolean } = {}): string {
  const text = typeof query === 'string' ? query.trim() : '';
  if (text.length === 0 && !options.optional) throw invalid('query is empty');
  if (text.length > MAX_QUERY_CHARS) {
    throw invalid(`query is too long (${text.length} characters): at most ${MAX_QUERY_CHARS}; search for the few words that matter`, {
      max_chars: MAX_QUERY_CHARS,
    });
  }
  return text;
}

export function validateLimit(limit: number, max: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw invalid(`limit must be an integer from 1 to ${max}, got ${limit}`);
  return limit;
}

/** Parses an ISO 8601 date-time argument called `name`; an empty string means "no bound". */
export function parseDateTime(value: string, name: string): Date | undefined {
  if (value === '') return undefined;
  const time = Date.parse(value);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) {
    throw invalid(`invalid ${name} ${JSON.stringify(value)}: use an ISO 8601 date-time such as 2026-02-20T18:00:00Z`);
  }
  return new Date(time);
}

export const parseSince = (since: string): Date | undefined => parseDateTime(since, 'since');
