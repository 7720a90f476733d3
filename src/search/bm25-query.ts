/**
 * Turns a query into what the BM25 loop scores: per query word, the index terms it may match,
 * each with a weight (exact 1, prefix 0.5, fuzzy 0.3) and an idf.
 *
 * The terms of one word are alternatives: a document scores the best of them, not their sum, so
 * a word with an English and a French stem, or many completions, counts once.
 */
import { fold, tokenize } from './analyze.js';
import type { SortedTerms } from './bm25-terms.js';
import { forEachFuzzy, prefixRange } from './term-match.js';

export const K1 = 1.2;
/**
 * Length normalisation, below the usual 0.75: notes are short (a sentence to a paragraph), and at
 * 0.75 a short note that merely asks about a thing ("What's the pup's name?") outranks the longer
 * one that answers it. Measured on LoCoMo's turns (bench section 21, dev split), with the agent field
 * of recall/ranking.ts: recall@5 0.589 at 0.75, 0.597 at 0.5, 0.604 at 0.3; 0 scored higher still
 * (0.619) but drops length from the score altogether, so a long note would win on repetition.
 */
export const B = 0.3;
export const PREFIX_WEIGHT = 0.5;
export const FUZZY_WEIGHT = 0.3;
/** Words shorter than this (folded) are matched exactly only. */
export const MIN_PREFIX_LENGTH = 3;
export const MIN_FUZZY_LENGTH = 5;
/** From this length a word may be two edits away instead of one. */
export const TWO_EDITS_LENGTH = 9;
/**
 * Most expansions (prefix and fuzzy) kept per word, the shortest first. A safety bound: "con"
 * may complete to thousands of terms, and each costs a postings scan.
 */
export const MAX_EXPANSIONS = 200;
/**
 * Distinct words of a query that count; the rest are ignored. Agents ask in a few words, and a
 * pasted note would otherwise pay a fuzzy scan of the term list per word.
 */
export const MAX_QUERY_WORDS = 32;

const HAS_DIGIT = /\p{N}/u;

export interface QueryTerm {
  term: string;
  weight: number;
  idf: number;
}

/** What the planner needs to know about the index. */
export interface TermStats {
  termsOf(token: string): readonly string[];
  /** Live documents holding the term (0 when absent). */
  held(term: string): number;
  /** Of those, the ones the statistics count (background documents are not: see IndexOptions). */
  df(term: string): number;
  /** Every term of the index, as sorted lists that may overlap. */
  sortedTerms(): ReadonlyArray<SortedTerms>;
  /** Live documents the statistics count. */
  docCount: number;
}

export interface MatchOptions {
  prefix: boolean;
  fuzzy: boolean;
}

export function idf(docCount: number, df: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}

/** One list per distinct query word that has terms; words that are only stopwords drop out. */
export function planQuery(query: string, stats: TermStats, options: MatchOptions): QueryTerm[][] {
  const plans: QueryTerm[][] = [];
  const seen = new Set<string>();
  for (const { token } of tokenize(query)) {
    const terms = stats.termsOf(token);
    if (terms.length === 0) continue;
    const folded = fold(token);
    if (seen.has(folded)) continue;
    seen.add(folded);
    const plan = planWord(folded, terms, stats, options);
    if (plan.length > 0) plans.push(plan);
    if (seen.size >= MAX_QUERY_WORDS) break;
  }
  return plans;
}

function planWord(folded: string, terms: readonly string[], stats: TermStats, options: MatchOptions): QueryTerm[] {
  const plan: QueryTerm[] = [];
  let exactIdf = 0;
  for (const term of terms) {
    if (stats.held(term) === 0) continue;
    // A term only background documents hold is as rare as a term can be among the others.
    const termIdf = idf(stats.docCount, stats.df(term));
    exactIdf = Math.max(exactIdf, termIdf);
    plan.push({ term, weight: 1, idf: termIdf });
  }

  const expansions = expand(folded, terms, stats, options);
  const kept: Array<[string, number, number]> = [];
  for (const [term, weight] of expansions) {
    if (stats.held(term) > 0) kept.push([term, weight, stats.df(term)]);
  }
  if (kept.length > MAX_EXPANSIONS) {
    kept.sort((a, b) => b[1] - a[1] || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1));
    kept.length = MAX_EXPANSIONS;
  }
  for (const [term, weight, df] of kept) {
    // A completion or a near miss never gets a higher idf than the word itself: otherwise a rare
    // "notebook" would outrank the "note" that was asked for.
    const termIdf = exactIdf > 0 ? Math.min(idf(stats.docCount, df), exactIdf) : idf(stats.docCount, df);
    plan.push({ term, weight, idf: termIdf });
  }
  return plan;
}

/** Index terms the word reaches by prefix or edit distance, with their best weight; exact terms excluded. */
function expand(folded: string, terms: readonly string[], stats: TermStats, options: MatchOptions): Map<string, number> {
  const found = new Map<string, number>();
  const usePrefix = options.prefix && folded.length >= MIN_PREFIX_LENGTH;
  // Numbers, versions and ids are either right or wrong: "8080" is not a typo of "8081".
  const useFuzzy = options.fuzzy && folded.length >= MIN_FUZZY_LENGTH && !HAS_DIGIT.test(folded);
  if (!usePrefix && !useFuzzy) return found;
  const exact = new Set(terms);
  const offer = (term: string, weight: number): void => {
    if (!exact.has(term) && (found.get(term) ?? 0) < weight) found.set(term, weight);
  };
  // Prefix matching is for words typed in part, which have no meaningful stem: only the folded
  // word is a prefix. Stems do take part in fuzzy matching, where they absorb inflections
  // ("databse" → "databs" is one edit from the stem "databas", the word itself two).
  const forms = [...new Set([folded, ...terms])];
  const wordEdits = folded.length >= TWO_EDITS_LENGTH ? 2 : 1;
  for (const list of stats.sortedTerms()) {
    if (usePrefix) {
      const [from, to] = prefixRange(list, folded);
      for (let i = from; i < to; i++) offer(list.at(i) as string, PREFIX_WEIGHT);
    }
    if (!useFuzzy) continue;
    for (const form of forms) {
      if (form.length < MIN_FUZZY_LENGTH) continue;
      // A short stem of a long word gets one edit: two edits on five letters match nearly anything.
      const edits = Math.min(wordEdits, form.length >= 7 ? 2 : 1);
      forEachFuzzy(list, form, edits, (term) => offer(term, FUZZY_WEIGHT));
    }
  }
  return found;
}
