/**
 * Where a forgotten note's words are still found, verbatim: what a forget cannot rewrite (the bank,
 * the synthesis, earlier bank text) it reports by line, so a person corrects it. Verbatim is what
 * matters most: a secret, a name, an address is copied, not paraphrased. A line quotes the notes when
 * it holds one of their distinctive tokens (a run of six characters or more, with letters and digits
 * or symbols: a password, a key, an address, a path, a code name) or six of their words in a row.
 * Ordinary words alone ("password", "database") never make a hit, nor dates and numbers.
 */

/** Words in a row that make a quote. */
const RUN = 6;
/** The shortest distinctive token. */
const MIN_TOKEN = 6;
const EDGE = /^[\s"'`()[\]{}<>,.;:!?*]+|[\s"'`()[\]{}<>,.;:!?*]+$/gu;
const WORD = /[\p{L}\p{N}]+/gu;

export interface Quotes {
  tokens: Set<string>;
  runs: Set<string>;
}

const words = (text: string): string[] => (text.toLowerCase().match(WORD) ?? []) as string[];

/** A token that stands for itself: letters with digits or symbols inside (not a plain word, not a date or a number). */
function distinctive(token: string): boolean {
  if (token.length < MIN_TOKEN || !/\p{L}/u.test(token)) return false;
  return /\p{N}/u.test(token) || /[^\p{L}\p{N}]/u.test(token);
}

/** What of `texts` (the notes) a quote would hold. */
export function quotesOf(texts: readonly string[]): Quotes {
  const tokens = new Set<string>();
  const runs = new Set<string>();
  for (const text of texts) {
    for (const raw of text.split(/\s+/)) {
      const token = raw.replace(EDGE, '');
      if (distinctive(token)) tokens.add(token);
    }
    const all = words(text);
    for (let i = 0; i + RUN <= all.length; i++) runs.add(all.slice(i, i + RUN).join(' '));
  }
  return { tokens, runs };
}

/** The lines of `text` (numbered from 1) that quote the notes. */
export function quotingLines(text: string, quotes: Quotes): number[] {
  if (quotes.tokens.size === 0 && quotes.runs.size === 0) return [];
  const hits: number[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    let hit = false;
    for (const token of quotes.tokens) if (!hit && line.includes(token)) hit = true;
    if (!hit) {
      const all = words(line);
      for (let j = 0; j + RUN <= all.length && !hit; j++) hit = quotes.runs.has(all.slice(j, j + RUN).join(' '));
    }
    if (hit) hits.push(i + 1);
  }
  return hits;
}
