import type { Analyzer } from '../../search/analyze.js';
import { lowerBound } from '../../search/term-match.js';
import { dateKeysCovered } from './dates.js';
import { extractItems, type Item } from './items.js';
import { containsWhole, flatten } from './normalize.js';
import { canonicalValue, numberWord } from './units.js';

/**
 * A text an item is looked for in (a cited section, the whole new bank, a successor note), in the
 * normal form of normalize.ts, with what each kind of item is compared by, each built the first time
 * it is needed: most items are found verbatim, and a text's own items are read only for what is not.
 *
 * - identifiers, paths, flags, URLs, code: the flattened text holds the key as a whole (containsWhole);
 * - numbers: the value (any of its readings) with the same unit or none, `three` read as 3, or the
 *   digits as written (a number inside an identifier: `build-4521`);
 * - dates and times: the canonical key (a date answers for its month and year: `2023-05` is found
 *   in `8 May 2023`), or the text as written;
 * - versions: with or without `v`; hashes: one a prefix of the other, seven characters at least;
 * - names: every word of the name among the text's words; rare words: a stem of the word among the
 *   text's terms (the search analyser's: simple inflections, English and French). For both, a word
 *   of six letters or more that is a prefix of one of the text's (or the other way round) counts:
 *   "Postgres" for "PostgreSQL", "config" for "configuration".
 */
export interface Haystack {
  flat: string;
  has(item: Item): boolean;
  /**
   * `has`, for a text the note was not cited for (the whole bank): a number of one or two digits
   * without a unit is found there only with the word that follows it in the note ("3 replicas",
   * "three replicas"), since such a number is in any large bank for some other reason.
   */
  hasWide(item: Item): boolean;
  /** Whether the text holds an item of this kind (and, for a number, this unit): what a successor replaces a value with. */
  hasKind(item: Item): boolean;
}

/** Shortest shared start for a word to count as a prefix of another (lookup of names and rare words). */
const MIN_PREFIX = 6;
/** Letters a stem shares with the start of its word (rarity.ts filters by them too). */
export const STEM_PREFIX = 3;

const WORDS = /[\p{L}\p{N}]+/gu;

export function haystack(text: string, analyzer: Analyzer): Haystack {
  const flat = flatten(text);
  let words: { set: Set<string>; sorted: string[] } | undefined;
  const terms = new Map<string, boolean>();
  let structured: Structured | undefined;

  const wordsOf = () => {
    if (!words) {
      const set = new Set(flat.match(WORDS) ?? []);
      words = { set, sorted: [...set].sort() };
    }
    return words;
  };
  /**
   * Whether a word of the text has `term` among its stems. Only the words sharing its first letters
   * are stemmed (a stem keeps the start of its word): the text is never analysed whole.
   */
  const hasTerm = (term: string): boolean => {
    let found = terms.get(term);
    if (found === undefined) {
      const start = term.slice(0, STEM_PREFIX);
      const { sorted } = wordsOf();
      found = false;
      for (let at = lowerBound(sorted, start); at < sorted.length && (sorted[at] as string).startsWith(start); at++) {
        if (analyzer.termsOf(sorted[at] as string).includes(term)) {
          found = true;
          break;
        }
      }
      terms.set(term, found);
    }
    return found;
  };
  const structure = () => {
    structured ??= readStructure(text, wordsOf().set);
    return structured;
  };

  /** `word` is a word of the text, or shares a long prefix with one (see MIN_PREFIX). */
  const hasWord = (word: string): boolean => {
    const { set, sorted } = wordsOf();
    if (set.has(word)) return true;
    if (word.length < MIN_PREFIX) return false;
    for (let length = MIN_PREFIX; length < word.length; length++) if (set.has(word.slice(0, length))) return true;
    return sorted[lowerBound(sorted, word)]?.startsWith(word) === true;
  };

  const has = (item: Item): boolean => {
    switch (item.kind) {
      case 'name':
        return (item.key.match(WORDS) ?? []).every(hasWord);
      case 'word':
        return (item.values ?? []).some(hasTerm) || hasWord(item.key);
      case 'number': {
        if (item.unit === '' && (containsWhole(flat, item.key) || containsWhole(flat, `v${item.key}`))) return true;
        const found = structure().numbers;
        return (item.values ?? []).some((value) => {
          const units = found.get(value);
          return units !== undefined && (item.unit === '' || units.has(item.unit ?? '') || units.has(''));
        });
      }
      case 'date':
        return (item.values ?? [item.key]).some((key) => structure().dates.has(key)) || containsWhole(flat, flatten(item.text));
      case 'time':
        return structure().times.has(item.key) || containsWhole(flat, flatten(item.text));
      case 'version':
        return containsWhole(flat, item.key) || containsWhole(flat, `v${item.key}`);
      case 'hash':
        return containsWhole(flat, item.key) || structure().hashes.some((hash) => sharesPrefix(hash, item.key));
      default:
        return containsWhole(flat, item.key);
    }
  };

  const hasWide = (item: Item): boolean => {
    if (item.kind !== 'number' || item.unit !== '' || !/^\d{1,2}$/.test(item.key)) return has(item);
    const context = flatten(item.text);
    if (context === item.key) return has(item);
    const word = context.slice(item.key.length + 1);
    return containsWhole(flat, context) || NUMBER_NAMES[Number(item.key)]?.some((name) => containsWhole(flat, `${name} ${word}`)) === true;
  };

  const hasKind = (item: Item): boolean => {
    const { kinds, numbers } = structure();
    if (item.kind !== 'number') return kinds.has(item.kind);
    return [...numbers.values()].some((units) => item.unit === '' || units.has(item.unit ?? ''));
  };

  return { flat, has, hasWide, hasKind };
}

interface Structured {
  /** Value → the units it is written with ('' for none). */
  numbers: Map<string, Set<string>>;
  /** Date keys, each with the less precise keys it answers for. */
  dates: Set<string>;
  times: Set<string>;
  hashes: string[];
  kinds: Set<Item['kind']>;
}

function readStructure(text: string, words: ReadonlySet<string>): Structured {
  const numbers = new Map<string, Set<string>>();
  const addNumber = (value: string, unit: string) => numbers.set(value, (numbers.get(value) ?? new Set()).add(unit));
  const dates = new Set<string>();
  const times = new Set<string>();
  const hashes: string[] = [];
  const kinds = new Set<Item['kind']>();
  for (const item of extractItems(text, { values: true }).items) {
    kinds.add(item.kind);
    if (item.kind === 'number') for (const value of item.values ?? []) addNumber(value, item.unit ?? '');
    else if (item.kind === 'date') {
      for (const key of item.values ?? [item.key]) {
        for (const covered of dateKeysCovered(key)) dates.add(covered);
        // A year is a number too ("in 2023" / "2023 budget").
        if (/^\d{4}$/.test(key)) addNumber(key, '');
      }
    } else if (item.kind === 'version') {
      // "Redis v7.2" still says the 7.2 of "Redis 7.2".
      if (/^\d+\.\d+$/.test(item.key)) addNumber(canonicalValue(Number(item.key)), '');
    } else if (item.kind === 'time') times.add(item.key);
    else if (item.kind === 'hash') hashes.push(item.key);
  }
  for (const word of words) {
    const value = numberWord(word);
    if (value !== undefined) addNumber(String(value), '');
  }
  return { numbers, dates, times, hashes, kinds };
}

/** How the numbers one to twelve are spelt out, English and French (the context of a small number: hasWide). */
const NUMBER_NAMES: Record<number, string[]> = Object.fromEntries(
  [
    'one un une',
    'two deux',
    'three trois',
    'four quatre',
    'five cinq',
    'six',
    'seven sept',
    'eight huit',
    'nine neuf',
    'ten dix',
    'eleven onze',
    'twelve douze',
  ].map((names, i) => [i + 1, names.split(' ')]),
);

/** Two hashes the same commit or object: one starts the other, over seven characters at least. */
const sharesPrefix = (a: string, b: string): boolean => Math.min(a.length, b.length) >= 7 && (a.startsWith(b) || b.startsWith(a));
