import { DATE_PATTERNS, dateKey, TIME_PATTERNS, timeKey } from './dates.js';
import { FUNCTION_WORDS, NEGATION, NOT_NAMES, OPENERS, PATTERNS } from './item-patterns.js';
import { flatten, plain } from './normalize.js';
import { scaleOf, unitOf, valuesOf } from './units.js';

/**
 * The salient items of a text: what a faithful rewrite must still say, found by patterns, never by a
 * model. In order of precedence (a span taken by one kind is not read again by the next): code spans,
 * URLs and e-mail addresses, paths and file names, dates and times, versions and IP addresses, command
 * flags, hashes and UUIDs, numbers with their unit, identifiers (`parsePlan()`, `max_tokens`,
 * `core.retention`, `camelCase`, `f0001`, `utf-8`), bare numbers (a year is a date), proper names
 * (capitalised words not at the start of a sentence, acronyms, words with inner capitals), and the
 * remaining words (the candidates rarity picks from: rarity.ts).
 *
 * Each item has the text a person is shown (as the note writes it) and the key it is looked up by
 * (lookup.ts), in the one normal form of normalize.ts.
 */
export type ItemKind = 'number' | 'date' | 'time' | 'version' | 'url' | 'path' | 'flag' | 'hash' | 'identifier' | 'name' | 'word';
export const ITEM_KINDS: readonly ItemKind[] = ['number', 'date', 'time', 'version', 'url', 'path', 'flag', 'hash', 'identifier', 'name', 'word'];

export interface Item {
  kind: ItemKind;
  /** As the text writes it, one line, at most MAX_ITEM_CHARS. */
  text: string;
  /** What it is looked up by: flattened text, or a date's or time's key. */
  key: string;
  /** A number's possible values (canonical), a date's possible keys. */
  values?: string[];
  /** A number's canonical unit ('' when none). */
  unit?: string;
}

interface Extracted {
  items: Item[];
  /** The text's other words (at least three letters), as written: rarity.ts picks the rarest as `word` items. */
  words: string[];
}

const MAX_ITEM_CHARS = 80;

class Reader {
  private readonly claimed: Uint8Array;
  private readonly found: Array<{ item: Item; at: number }> = [];
  private readonly keys = new Set<string>();
  /** Where the match being read starts: items are listed in the order the text says them. */
  at = 0;

  constructor(readonly text: string) {
    this.claimed = new Uint8Array(text.length);
  }

  free(start: number, end: number): boolean {
    for (let i = start; i < end; i++) if (this.claimed[i]) return false;
    return true;
  }

  claim(start: number, end: number): void {
    this.claimed.fill(1, start, end);
  }

  /** Adds `item`; the match it came from is taken. */
  took(item: Item): true {
    this.add(item);
    return true;
  }

  add(item: Item): void {
    const id = `${item.kind}\u0000${item.key}`;
    if (item.key === '' || this.keys.has(id)) return;
    this.keys.add(id);
    this.found.push({ item: { ...item, text: oneLine(item.text) }, at: this.at });
  }

  get items(): Item[] {
    return [...this.found].sort((a, b) => a.at - b.at).map(({ item }) => item);
  }

  /** Every free match of `pattern`; `take` returns whether it took it (its span is then claimed). */
  scan(pattern: RegExp, take: (match: RegExpExecArray, start: number, end: number) => boolean | [number, number]): void {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(this.text); match !== null; match = pattern.exec(this.text)) {
      if (match[0] === '') {
        pattern.lastIndex++;
        continue;
      }
      const start = match.index;
      const end = start + match[0].length;
      if (!this.free(start, end)) continue;
      this.at = start;
      const taken = take(match, start, end);
      if (taken === true) this.claim(start, end);
      else if (Array.isArray(taken)) this.claim(taken[0], taken[1]);
    }
  }

  private chunks: Array<[number, number]> | undefined;

  /**
   * `scan`, for a pattern that never spans white space, run only over the white-space-separated
   * chunks that `could` hold a match (a path needs a slash, an identifier a dot, an underscore…):
   * most of a prose text is never looked at by most patterns, which keeps a long text cheap.
   */
  scanTokens(pattern: RegExp, could: RegExp, take: (match: RegExpExecArray, start: number, end: number) => boolean | [number, number]): void {
    this.chunks ??= [...this.text.matchAll(/\S+/g)].map((m) => [m.index ?? 0, (m.index ?? 0) + m[0].length] as [number, number]);
    for (const [from, to] of this.chunks) {
      const chunk = this.text.slice(from, to);
      if (!could.test(chunk)) continue;
      pattern.lastIndex = 0;
      for (let match = pattern.exec(chunk); match !== null; match = pattern.exec(chunk)) {
        if (match[0] === '') {
          pattern.lastIndex++;
          continue;
        }
        const start = from + match.index;
        const end = start + match[0].length;
        if (!this.free(start, end)) continue;
        this.at = start;
        match.index = start;
        const taken = take(match, start, end);
        if (taken === true) this.claim(start, end);
        else if (Array.isArray(taken)) this.claim(taken[0], taken[1]);
      }
    }
  }

  /** The free runs of text, each as [start, end). */
  freeRuns(): Array<[number, number]> {
    const runs: Array<[number, number]> = [];
    let start = -1;
    for (let i = 0; i <= this.text.length; i++) {
      const free = i < this.text.length && !this.claimed[i];
      if (free && start < 0) start = i;
      else if (!free && start >= 0) {
        runs.push([start, i]);
        start = -1;
      }
    }
    return runs;
  }
}

const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ITEM_CHARS ? `${line.slice(0, MAX_ITEM_CHARS - 1)}…` : line;
};

/** Trailing punctuation a sentence puts after a URL or a path: not part of it. */
const trimTrail = (text: string): string => text.replace(/[.,;:!?)\]}'"]+$/, '');

/** Whether the word at `at` starts a sentence: nothing before it but openers since a line start, a sentence end or a list marker. */
function startsSentence(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text[i] as string;
    if (c === '\n') return true;
    if (OPENERS.has(c)) continue;
    if (/[.!?:;…]/.test(c)) return true;
    return c === ')' && /^\s*\d+$/.test(text.slice(text.lastIndexOf('\n', i) + 1, i));
  }
  return true;
}

const numberItem = (text: string, raw: string, unit: string, scale = 1): Item => ({
  kind: 'number',
  text,
  key: flatten(raw),
  values: valuesOf(raw, scale),
  unit,
});

/**
 * The items of `text` (a note, a section), and its other words. Deterministic; linear in the text for
 * each pattern. `values`: only numbers, dates, times, versions and hashes, and no words (what a text
 * items are looked for in is read for: lookup.ts).
 */
export function extractItems(text: string, options: { values?: boolean } = {}): Extracted {
  const reader = new Reader(plain(text));
  const t = reader.text;
  const all = options.values !== true;

  if (all) readCode(reader);
  for (const { pattern, read } of DATE_PATTERNS) {
    reader.scan(pattern, (m) => {
      const keys = [...new Set(read(m).flatMap((date) => dateKey(date) ?? []))];
      if (keys.length === 0) return false;
      reader.add({ kind: 'date', text: m[0], key: keys[0] as string, values: keys });
      return true;
    });
  }
  for (const { pattern, read } of TIME_PATTERNS) {
    reader.scan(pattern, (m) => {
      const key = timeKey(read(m));
      if (!key) return false;
      reader.add({ kind: 'time', text: m[0], key });
      return true;
    });
  }
  if (all) reader.scanTokens(PATTERNS.ip, /\d\.\d/, (m) => reader.took({ kind: 'identifier', text: m[0], key: m[0] }));
  reader.scanTokens(PATTERNS.version, /\d\.\d|v\d/, (m) => reader.took({ kind: 'version', text: m[0], key: versionKey(m[0]) }));
  if (all) reader.scanTokens(PATTERNS.flag, /(?:^|[([`'"=])-/, (m) => reader.took({ kind: 'flag', text: m[0], key: flatten(m[0]) }));
  reader.scanTokens(PATTERNS.uuid, /-.*\d|\d.*-/, (m) => reader.took({ kind: 'hash', text: m[0], key: m[0].toLowerCase() }));
  reader.scanTokens(PATTERNS.hash, /[0-9a-f]{7}/, (m) => reader.took({ kind: 'hash', text: m[0], key: m[0] }));
  reader.scan(PATTERNS.numberWithUnit, (m) => {
    if (m[4] !== undefined) {
      reader.add(numberItem(m[0], m[5] as string, unitOf(m[4]) ?? ''));
      return true;
    }
    const [raw, gap, word] = [m[1] as string, m[2] ?? '', m[3] as string];
    const scale = gap === '' || gap === ' ' ? scaleOf(word) : undefined;
    if (scale !== undefined) {
      reader.add(numberItem(m[0], raw, '', scale));
      return true;
    }
    const unit = unitOf(word);
    if (unit === undefined) return false;
    reader.add(numberItem(m[0], raw, unit));
    return true;
  });
  if (all) readIdentifiers(reader);
  reader.scan(PATTERNS.bareNumber, (m, start) => {
    const raw = m[1] as string;
    const lineStart = t.lastIndexOf('\n', start - 1) + 1;
    // An ordered list's marker ("2. …") numbers lines; it states nothing.
    if (/^[ \t]*$/.test(t.slice(lineStart, start)) && /^[.)]\s/.test(t.slice(start + raw.length, start + raw.length + 2))) return true;
    if (/^(?:1[89]|20)\d{2}$/.test(raw)) {
      reader.add({ kind: 'date', text: raw, key: raw, values: [raw] });
      return true;
    }
    // The word after a bare number says what it counts ("3 replicas"): shown with it, and what finds it in a large bank (lookup.ts).
    const next = /^\s([\p{L}][\p{L}\p{M}'-]*)/u.exec(t.slice(start + raw.length, start + raw.length + 40))?.[1];
    const counted = next !== undefined && next.length > 2 && !FUNCTION_WORDS.has(flatten(next));
    reader.add(numberItem(counted ? `${raw} ${next}` : raw, raw, ''));
    return true;
  });
  if (!all) return { items: reader.items, words: [] };
  readNames(reader);

  const words: string[] = [];
  for (const [start, end] of reader.freeRuns()) {
    const run = t.slice(start, end);
    for (const match of run.matchAll(PATTERNS.word)) {
      // The stem of a negation ("won't", "didn't") is no word of its own.
      if (!NEGATION.test(run.slice(match.index + match[0].length, match.index + match[0].length + 3))) words.push(match[0]);
    }
  }
  return { items: reader.items, words };
}

/** Code spans, URLs, e-mail addresses, paths and file names: read first, what they hold is theirs. */
function readCode(reader: Reader): void {
  // Code spans of one token are read by the patterns below (a path in backticks is a path); a longer one is one item.
  reader.scan(PATTERNS.inlineCode, (m, start, end) => {
    const code = (m[1] as string).trim();
    if (!/\s/.test(code)) {
      reader.claim(start, start + 1);
      reader.claim(end - 1, end);
      return false;
    }
    if (!/[\p{L}\p{N}]/u.test(code)) return false;
    reader.add({ kind: 'identifier', text: code, key: flatten(code).replace(/\s+/g, ' ') });
    return true;
  });
  reader.scanTokens(PATTERNS.url, /:\/\/|www\./, (m, start) => {
    const url = trimTrail(m[0]);
    reader.add({ kind: 'url', text: url, key: urlKey(url) });
    return [start, start + url.length];
  });
  reader.scanTokens(PATTERNS.email, /@/, (m) => reader.took({ kind: 'identifier', text: m[0], key: flatten(m[0]) }));
  const paths: Array<[RegExp, RegExp]> = [
    [PATTERNS.windowsPath, /:\\/],
    [PATTERNS.absolutePath, /\//],
    [PATTERNS.relativePath, /\//],
    [PATTERNS.fileName, /\./],
  ];
  for (const [pattern, could] of paths) {
    reader.scanTokens(pattern, could, (m, start) => {
      const path = trimTrail(m[0]);
      if (pattern === PATTERNS.relativePath && !isRelativePath(path)) return false;
      if (pattern === PATTERNS.absolutePath && !/[\p{L}]/u.test(path)) return false;
      reader.add({ kind: 'path', text: path, key: pathKey(path) });
      return [start, start + path.length];
    });
  }
}

/** Identifiers: a call, a dotted name, snake_case, camelCase, a word with digits in it or joined by hyphens to one. */
function readIdentifiers(reader: Reader): void {
  const identifiers: Array<[RegExp, RegExp]> = [
    [PATTERNS.call, /\(/],
    [PATTERNS.dotted, /\.\w/],
    [PATTERNS.snake, /_/],
    [PATTERNS.camel, /[a-z][A-Z]/],
    [PATTERNS.hyphenated, /-.*\d|\d.*-/],
    [PATTERNS.alphanumeric, /[A-Za-z]\d|\d[A-Za-z]/],
  ];
  for (const [pattern, could] of identifiers) {
    reader.scanTokens(pattern, could, (m) => {
      const token = m[0].replace(/\(\)?$/, '');
      if (pattern === PATTERNS.call && (token.length < 2 || !/[a-z]/i.test(token))) return false;
      if (pattern === PATTERNS.dotted && !token.split('.').every((part) => part.length >= 2)) return false;
      if (pattern === PATTERNS.hyphenated && !(/\p{N}/u.test(token) && /\p{L}/u.test(token))) return false;
      reader.add({ kind: 'identifier', text: token, key: flatten(token) });
      return true;
    });
  }
}

/**
 * Proper names: a capitalised word not at the start of a sentence, or at the start of one when the
 * text also writes it capitalised elsewhere; an acronym; a word with inner capitals ("GitHub").
 * Capitalised words in a row are one name ("New York"); a possessive's `'s` is no part of it.
 */
function readNames(reader: Reader): void {
  const t = reader.text;
  const found: Array<{ word: string; start: number; end: number; initial: boolean }> = [];
  PATTERNS.name.lastIndex = 0;
  for (const match of t.matchAll(PATTERNS.name)) {
    const start = match.index ?? 0;
    const end = start + match[0].length;
    if (!reader.free(start, end)) continue;
    const word = match[0];
    const folded = flatten(word);
    if (word.length < 2 || NOT_NAMES.has(folded)) continue;
    found.push({ word, start, end, initial: startsSentence(t, start) });
  }
  const inner = new Set(found.filter((f) => !f.initial).map((f) => flatten(f.word)));
  const isName = (f: (typeof found)[number]) =>
    !f.initial || inner.has(flatten(f.word)) || /^\p{Lu}{2,}$/u.test(f.word) || /^\p{Lu}\p{Ll}+\p{Lu}/u.test(f.word);
  const names = found.filter((f) => isName(f) && !/^\p{Lu}\p{Ll}?$/u.test(f.word));
  for (let i = 0; i < names.length; i++) {
    const first = names[i] as (typeof names)[number];
    let last = first;
    while (i + 1 < names.length) {
      const next = names[i + 1] as (typeof names)[number];
      if (!/^ $/.test(t.slice(last.end, next.start)) || next.initial) break;
      last = next;
      i++;
    }
    const text = t.slice(first.start, last.end);
    reader.at = first.start;
    reader.add({ kind: 'name', text, key: flatten(text) });
    reader.claim(first.start, last.end);
  }
}

function isRelativePath(path: string): boolean {
  const parts = path.replace(/\/$/, '').split('/');
  if (parts.every((part) => /^\d+$/.test(part))) return false;
  return parts.length >= 3 || path.endsWith('/') || /\.[A-Za-z0-9]{1,8}$/.test(parts.at(-1) as string);
}

/** A URL compared without its scheme, `www.` and a trailing slash: `https://www.example.com/` is `example.com`. */
const urlKey = (url: string): string =>
  flatten(url)
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/^www\./, '')
    .replace(/\/+$/, '');

const pathKey = (path: string): string => flatten(path).replace(/^\.\//, '').replace(/\/+$/, '');

const versionKey = (version: string): string => flatten(version).replace(/^v/, '');
