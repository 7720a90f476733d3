/**
 * The text analyser shared by indexing and querying: the same function turns a note and a query
 * into terms, so the two always agree on what a word becomes.
 *
 * A word is folded (lowercase, no diacritics), dropped if it is a stopword or a single character,
 * then indexed under its English and its French stem: notes mix the two languages and we do not
 * guess which one a word belongs to.
 */
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stemmer as frenchStemmer } from '@orama/stemmers/french';
import { MemoCache } from '../shared/bounded-cache.js';

export interface Token {
  token: string;
  /** UTF-16 offsets into the analysed text, end exclusive (for snippets). */
  start: number;
  end: number;
}

export interface Analyzer {
  /** The same as the module's `tokenize`, here so a caller can hold one object. */
  tokenize(text: string): Token[];
  /** Distinct terms of one token; empty for stopwords, single characters and overlong tokens. Shared: do not mutate. */
  termsOf(token: string): readonly string[];
  /** Every term of the text in order, with repeats (term frequencies are counted from it). */
  analyze(text: string): string[];
}

/** Longer tokens are hashes, base64 or minified code: not words anyone searches by. */
export const MAX_TOKEN_LENGTH = 64;

/** The stemmers cost about a microsecond per call: this many tokens' terms are kept (shared/bounded-cache.ts `MemoCache`). */
export const DEFAULT_CACHE_LIMIT = 200_000;

// \p{M} is part of a word so that text typed in decomposed form ("e" + U+0301) is not split at the accent.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MARKS = /\p{M}/gu;
const ASCII_LOWER = /^[a-z0-9]*$/;
const HAS_DIGIT = /\p{N}/u;
/** Letters that NFD does not decompose but French and German writers expect to match their spelling out. */
const LIGATURES: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss' };
const LIGATURE = /[œæß]/g;

const ENGLISH_STOPWORDS = [
  'the',
  'and',
  'of',
  'to',
  'in',
  'is',
  'it',
  'that',
  'for',
  'on',
  'with',
  'as',
  'was',
  'were',
  'be',
  'been',
  'being',
  'are',
  'am',
  'this',
  'these',
  'those',
  'at',
  'by',
  'an',
  'or',
  'from',
  'but',
  'not',
  'have',
  'has',
  'had',
  'do',
  'does',
  'did',
  'will',
  'would',
  'shall',
  'should',
  'can',
  'could',
  'may',
  'might',
  'must',
  'there',
  'their',
  'theirs',
  'they',
  'them',
  'then',
  'than',
  'so',
  'if',
  'into',
  'its',
  'our',
  'ours',
  'we',
  'us',
  'you',
  'your',
  'yours',
  'he',
  'him',
  'his',
  'she',
  'her',
  'hers',
  'me',
  'my',
  'which',
  'who',
  'whom',
  'whose',
  'what',
  'when',
  'where',
  'why',
  'how',
  'all',
  'any',
  'both',
  'each',
  'also',
  'just',
  'only',
  'very',
  'about',
  'such',
  'some',
  'other',
  'same',
  'too',
  'because',
  'while',
  'until',
  'again',
  'once',
  'here',
  'own',
  'nor',
];

// Written folded (no accents), since stopwords are checked after folding.
const FRENCH_STOPWORDS = [
  'le',
  'la',
  'les',
  'un',
  'une',
  'des',
  'du',
  'de',
  'au',
  'aux',
  'et',
  'ou',
  'est',
  'sont',
  'etre',
  'ete',
  'etait',
  'ai',
  'as',
  'avons',
  'avez',
  'ont',
  'avait',
  'ce',
  'cet',
  'cette',
  'ces',
  'ca',
  'il',
  'ils',
  'elle',
  'elles',
  'je',
  'tu',
  'nous',
  'vous',
  'on',
  'se',
  'sa',
  'son',
  'ses',
  'mon',
  'ma',
  'mes',
  'ton',
  'ta',
  'tes',
  'notre',
  'nos',
  'votre',
  'vos',
  'leur',
  'leurs',
  'lui',
  'eux',
  'moi',
  'toi',
  'qui',
  'que',
  'quoi',
  'dont',
  'ne',
  'pas',
  'ni',
  'mais',
  'donc',
  'car',
  'si',
  'dans',
  'par',
  'pour',
  'sur',
  'sous',
  'avec',
  'sans',
  'chez',
  'entre',
  'vers',
  'tres',
  'aussi',
  'meme',
  'deja',
  'comme',
  'quand',
  'tout',
  'tous',
  'toute',
  'toutes',
  'ici',
  'cela',
  'ceci',
  'celui',
  'celle',
  'lorsque',
  'puis',
  'alors',
];

/** Words of letters and digits with their offsets; every other character separates words. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(WORD)) {
    const start = match.index ?? 0;
    tokens.push({ token: match[0], start, end: start + match[0].length });
  }
  return tokens;
}

/** The words of the text, without offsets (the fast path for indexing). */
export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** Lowercase without diacritics: "Décisions" → "decisions", "Œuvre" → "oeuvre". */
export function fold(token: string): string {
  const lower = token.toLowerCase();
  if (ASCII_LOWER.test(lower)) return lower;
  return lower
    .normalize('NFD')
    .replace(MARKS, '')
    .replace(LIGATURE, (c) => LIGATURES[c] ?? c);
}

/**
 * A copy of `s` that does not point into a larger string. V8 represents a substring of 13+
 * characters as a view on its parent, so a cached token or an index term taken from a note would
 * otherwise keep the whole note text alive for as long as the index lives.
 */
export function detach(s: string): string {
  return s.length < 13 ? s : ` ${s}`.slice(1);
}

export interface AnalyzerOptions {
  /** Most tokens whose terms are cached (0: none, for a caller that caches on its own). */
  cacheLimit?: number;
}

/** Shared by every analyser, never changed: one per index cost 10 KB each, for a thousand indexes 10 MB. */
const STOPWORDS: ReadonlySet<string> = new Set([...ENGLISH_STOPWORDS, ...FRENCH_STOPWORDS]);

/** A fresh analyser with its own stem cache (no mutable module state: each index owns one). */
export function createAnalyzer(options: AnalyzerOptions = {}): Analyzer {
  // Keyed by the raw token so a cache hit skips folding too.
  const cache = new MemoCache<readonly string[]>(options.cacheLimit ?? DEFAULT_CACHE_LIMIT);

  const compute = (token: string): readonly string[] => {
    if (token.length > MAX_TOKEN_LENGTH) return [];
    const folded = fold(token);
    if (folded.length < 2 || STOPWORDS.has(folded)) return [];
    // Numbers, versions and identifiers such as "ipv6" are matched as written, never stemmed.
    if (HAS_DIGIT.test(folded)) return [detach(folded)];
    const english = englishStemmer(folded);
    const french = frenchStemmer(folded);
    const terms = english === french ? [english] : [english, french];
    return terms.filter((term) => term.length > 0).map(detach);
  };

  const termsOf = (token: string): readonly string[] => {
    let terms = cache.get(token);
    if (terms === undefined) {
      terms = compute(token);
      cache.set(detach(token), terms);
    }
    return terms;
  };

  const analyze = (text: string): string[] => {
    const out: string[] = [];
    for (const word of words(text)) {
      for (const term of termsOf(word)) out.push(term);
    }
    return out;
  };

  return { tokenize, termsOf, analyze };
}
