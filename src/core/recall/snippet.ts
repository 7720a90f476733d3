import type { Analyzer } from '../../search/analyze.js';

/** Texts up to this many characters are returned whole. */
const WHOLE_CHARS = 600;
/** A snippet's length around its first match. */
const SNIPPET_CHARS = 320;

/**
 * The matching text of a hit: the whole text when short, else a window around the first word
 * that shares a term with the query (terms as the index sees them: folded, stemmed), cut at word
 * boundaries and marked with "…".
 */
export function snippetOf(text: string, query: string, analyzer: Analyzer): { text: string; truncated: boolean } {
  if (text.length <= WHOLE_CHARS) return { text, truncated: false };
  const wanted = new Set(analyzer.tokenize(query).flatMap((token) => analyzer.termsOf(token.token)));
  const match = analyzer.tokenize(text).find((token) => analyzer.termsOf(token.token).some((term) => wanted.has(term)));
  const center = match?.start ?? 0;
  let start = Math.max(0, center - Math.floor(SNIPPET_CHARS / 3));
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  start = Math.max(0, end - SNIPPET_CHARS);
  if (start > 0) start = text.indexOf(' ', start) + 1 || start;
  if (end < text.length) end = text.lastIndexOf(' ', end) > start ? text.lastIndexOf(' ', end) : end;
  return { text: `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`, truncated: true };
}
