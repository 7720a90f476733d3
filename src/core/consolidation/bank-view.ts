import type { TextIndexEngine } from '../../search/types.js';
import { bankSections, type BankSectionAt } from '../markdown/sections.js';
import type { ElidedSection } from '../commit/apply-plan.js';
import { estimateTokens } from '../tokens.js';

/**
 * What a consolidation shows the model of one bank file. A file within its allowance (its size
 * budget, or less when the bank must leave room for notes) is sent whole. A file over it is sent in
 * part, so the prompt stops growing with the file: every heading stays in place (the outline; an
 * elided section shows its heading and its size), and the allowance is spent on the top of the
 * file, its last section (where appends land) and the sections the window's notes touch, ranked by
 * BM25 of each note against the file's sections. Its size is then at most the allowance plus the
 * outline, whatever the file's length.
 *
 * The model did not see the elided sections: commit/apply-plan.ts refuses a whole-file rewrite of a file sent
 * in part, and a `replace` or `delete` reaching an elided section (see `elided`).
 */
export interface PartialView {
  /** The whole file's size. */
  tokens: number;
  /** Tokens the prompt gives the file: its budget, or less when the bank must shrink to leave room for notes. */
  allowance: number;
  /** Sections shown whole, of `total`. */
  shown: number;
  total: number;
  /** Sections not shown whole (elided, or shown cut). */
  elided: ElidedSection[];
}

export interface BankFileView {
  filename: string;
  /** What the prompt shows of the file. */
  text: string;
  /** Set when the file is over its allowance and sent in part. */
  partial?: PartialView;
  /**
   * Tokens the notes may still add to `text` by picking sections (what is left of the allowance): the
   * window is sized before its notes are known, on the view without notes plus this headroom.
   */
  headroom: number;
}

/** Hits of one query that count for a note: a note touches a few sections, not the whole file. */
const HITS_PER_QUERY = 5;
/** A note is queried in pieces of this many words (the engine reads the first 32 distinct words of a query)… */
const WORDS_PER_QUERY = 40;
/** …and at most this many pieces (a note can be 100,000 characters). */
const QUERIES_PER_NOTE = 20;
/** Past this many elided sections the outline keeps only the two outer heading levels; deeper runs collapse to a line. */
const MAX_OUTLINE_SECTIONS = 150;

type Shown = 'whole' | 'head' | 'tail';

/** The view of `content` for a window whose notes are `notes` (their texts; none when sizing the window). */
export function viewBankFile(filename: string, content: string, allowanceTokens: number, notes: readonly string[], engine: TextIndexEngine): BankFileView {
  const allowance = Math.max(1, Math.floor(allowanceTokens));
  const tokens = estimateTokens(content);
  const sections = tokens > allowance ? bankSections(filename, content) : [];
  if (sections.length === 0) return { filename, text: content, headroom: 0 };
  const sizes = sections.map((section) => estimateTokens(section.text));
  const shown = new Map<number, Shown>();
  const clip = Math.floor(allowance / 4);
  let used = 0;

  // The top (text before the first heading, and the first heading's own part) and the last section:
  // whole when they fit half the allowance, else cut to a quarter of it (the start of the top, the end of the last).
  const last = sections.length - 1;
  const forced = sections[0]?.path.length === 0 ? [0, 1, last] : [0, last];
  for (const i of new Set(forced.filter((i) => i <= last))) {
    const size = sizes[i] as number;
    const whole = size <= allowance / 2;
    shown.set(i, whole ? 'whole' : i === last ? 'tail' : 'head');
    used += whole ? size : clip;
  }
  for (const i of rankSections(sections, notes, engine)) {
    const size = sizes[i] as number;
    if (shown.has(i) || used + size > allowance) continue;
    shown.set(i, 'whole');
    used += size;
  }

  const elided = sections.flatMap((section, i) => (shown.get(i) === 'whole' ? [] : [{ path: section.path, start: section.start, end: section.end }]));
  const wholeCount = sections.length - elided.length;
  return {
    filename,
    text: render(sections, sizes, shown, clip),
    partial: { tokens, allowance, shown: wholeCount, total: sections.length, elided },
    headroom: Math.max(0, allowance - used),
  };
}

export interface FitOptions {
  /** Each file's budget. */
  fileTokens: (filename: string) => number;
  /** Tokens of the context left for the prompt. */
  room: number;
  /** Fewest tokens the notes must be left. */
  minNotes: number;
  /** Tokens of the prompt without notes, with these views. */
  measure: (views: BankFileView[]) => number;
  engine: TextIndexEngine;
}

/**
 * What each file may take of the prompt: its budget; while that leaves the notes less than a
 * quarter of the room (many files near their budgets, a small model), every allowance shrinks by a
 * quarter, down to 1/16. `fixedTokens` is the prompt without notes plus the room the notes' sections
 * may still take in the views: what a window of notes is sized against, before its notes are known.
 */
export function fitBank(files: ReadonlyArray<{ filename: string; content: string }>, options: FitOptions) {
  for (let scale = 1; ; scale *= 0.75) {
    const allowance = (filename: string): number => options.fileTokens(filename) * scale;
    const unread = files.map((file) => viewBankFile(file.filename, file.content, allowance(file.filename), [], options.engine));
    const fixedTokens = options.measure(unread) + unread.reduce((sum, view) => sum + view.headroom, 0);
    const left = options.room - fixedTokens;
    if (left >= Math.max(options.minNotes, options.room / 4) || scale < 1 / 16) return { allowance, fixedTokens };
  }
}

/**
 * Section indexes the notes touch, most touched first. Each note counts once per section (its best
 * piece, scaled by its own best hit), so a long note does not outweigh many short ones. The index is
 * built on the fly from this file alone: the space's index may lag the bank (it is derived, updated
 * in the background), and its statistics mix notes and history into the ranking.
 */
function rankSections(sections: readonly BankSectionAt[], notes: readonly string[], engine: TextIndexEngine): number[] {
  if (notes.length === 0) return [];
  const index = engine.create();
  for (const [i, section] of sections.entries()) index.add(String(i), `${section.path.join(' ')}\n${section.text}`);
  const scores = new Map<number, number>();
  for (const note of notes) {
    const best = new Map<number, number>();
    for (const query of queriesOf(note)) {
      const hits = index.search(query, { limit: HITS_PER_QUERY });
      const top = hits[0]?.score ?? 0;
      if (top <= 0) continue;
      for (const hit of hits) {
        const i = Number(hit.id);
        best.set(i, Math.max(best.get(i) ?? 0, hit.score / top));
      }
    }
    for (const [i, score] of best) scores.set(i, (scores.get(i) ?? 0) + score);
  }
  return [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([i]) => i);
}

function queriesOf(note: string): string[] {
  const words = note.split(/\s+/).filter(Boolean);
  const queries: string[] = [];
  for (let at = 0; at < words.length && queries.length < QUERIES_PER_NOTE; at += WORDS_PER_QUERY) queries.push(words.slice(at, at + WORDS_PER_QUERY).join(' '));
  return queries;
}

/** A section's heading line (both lines of a setext heading). */
const headingLine = (section: BankSectionAt): string => {
  const [first = '', second = ''] = section.text.split('\n', 2);
  return /^(=+|-+)\s*$/.test(second) ? `${first}\n${second}` : first;
};
const elidedMark = (tokens: number, what = 'section'): string => `[… elided ${what}: ${tokens} tokens, not shown …]`;

/** The file in order: sections shown whole verbatim, cut ones with a mark, elided ones as their heading and size. */
function render(sections: readonly BankSectionAt[], sizes: readonly number[], shown: ReadonlyMap<number, Shown>, clip: number): string {
  const elidedCount = sections.length - [...shown.values()].filter((mode) => mode === 'whole').length;
  const collapse = elidedCount > MAX_OUTLINE_SECTIONS;
  const blocks: string[] = [];
  let run = { count: 0, tokens: 0 };
  const flush = () => {
    if (run.count > 0) blocks.push(`[… ${run.count} deeper sections elided: ${run.tokens} tokens, not shown …]`);
    run = { count: 0, tokens: 0 };
  };
  for (const [i, section] of sections.entries()) {
    const mode = shown.get(i);
    const size = sizes[i] as number;
    if (!mode && collapse && section.path.length > 2) {
      run.count++;
      run.tokens += size;
      continue;
    }
    flush();
    const chars = Math.floor(clip * 3.5);
    if (mode === 'whole') blocks.push(section.text);
    else if (mode === 'head') {
      const head = section.text.slice(0, section.text.lastIndexOf('\n', chars) + 1 || chars).trimEnd();
      blocks.push(`${head}\n${elidedMark(size - estimateTokens(head), 'rest of this section')}`);
    } else if (mode === 'tail') {
      const from = section.text.indexOf('\n', section.text.length - chars);
      const tail = (from < 0 ? section.text.slice(-chars) : section.text.slice(from + 1)).trimStart();
      const heading = headingLine(section);
      blocks.push(`${heading}\n${elidedMark(size - estimateTokens(tail) - estimateTokens(heading), 'start of this section')}\n${tail}`);
    } else blocks.push(`${headingLine(section)}\n${elidedMark(size)}`);
  }
  flush();
  return `${blocks.join('\n\n')}\n`;
}
