import { marked, type Token } from 'marked';
import { normalizeLineEndings } from '../../shared/line-endings.js';

/**
 * The section model's reading of a Markdown text, on a real parse (marked's lexer): a `#` inside a
 * code fence or a block quote is no heading, setext headings count, and a section runs from its
 * heading to the next heading of the same or a higher level. And the guard every writer of the bank
 * compares outlines with (outlineDamage).
 *
 * Every text is read with its line endings normalised first (shared/line-endings.ts): the lexer
 * reads `\r\n` as `\n`, so offsets on a Windows file would not match it.
 */

export interface Heading {
  depth: number;
  text: string;
  /** Heading texts (trimmed) from the outermost enclosing heading down to this one. */
  path: string[];
  /** Offset of the heading's first character. */
  start: number;
  /** Offset just past the heading (its line, or its two setext lines). */
  bodyStart: number;
  /** Offset where the section ends: the next heading of the same or higher level, or the end. */
  end: number;
}

/** A document as the section model reads it: its text (line endings normalised), and its headings, offsets into that text. */
export interface Outline {
  text: string;
  headings: Heading[];
  /** The text ends inside a fenced code block it never closes: a heading added after it would be code. */
  openFence: boolean;
}

/** A heading's text as paths and guards compare it: spaces collapsed, case folded. */
export const normalizeHeading = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * The document's top-level headings with their section bounds and paths, in one pass: a heading
 * closes every open section of its level or deeper (a stack), so a file of many headings costs
 * what its lexing costs, not the square of its headings.
 */
export function outlineOf(markdown: string): Outline {
  const text = normalizeLineEndings(markdown);
  const headings: Heading[] = [];
  const open: Heading[] = [];
  let offset = 0;
  let last: Token | undefined;
  for (const token of marked.lexer(text)) {
    if (token.type === 'heading') {
      const depth = token.depth as number;
      while (open.length > 0 && (open[open.length - 1] as Heading).depth >= depth) (open.pop() as Heading).end = offset;
      const title = String(token.text);
      const heading: Heading = {
        depth,
        text: title,
        path: [...(open[open.length - 1]?.path ?? []), title.trim()],
        start: offset,
        bodyStart: offset + token.raw.length,
        end: text.length,
      };
      headings.push(heading);
      open.push(heading);
    }
    if (token.type !== 'space') last = token;
    offset += token.raw.length;
  }
  if (offset !== text.length) throw new Error('markdown lexer lost characters'); // never seen; refuse to edit blind
  return { text, headings, openFence: last !== undefined && isOpenFence(last) };
}

/** A fenced code block without its closing fence (the lexer runs it to the end of the text). */
function isOpenFence(token: Token): boolean {
  if (token.type !== 'code' || (token as { codeBlockStyle?: string }).codeBlockStyle === 'indented') return false;
  const lines = token.raw.replace(/\n+$/, '').split('\n');
  const opening = /^ {0,3}(`{3,}|~{3,})/.exec(lines[0] ?? '')?.[1];
  if (!opening || lines.length < 2) return true;
  const closing = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[lines.length - 1] as string)?.[1];
  return !closing || closing[0] !== opening[0] || closing.length < opening.length;
}

/**
 * Headings of `before` that `after` no longer has, by their text (normalised) and counted: two
 * "Notes" sections of which one is left is one lost. `dropped` are headings of `before` its change
 * removes on purpose. A heading that moves (under another parent, to another level) is not lost.
 */
export function lostHeadings(before: readonly Heading[], after: readonly Heading[], dropped: readonly Heading[] = []): Heading[] {
  const left = new Map<string, number>();
  const count = (headings: readonly Heading[], by: number) => {
    for (const heading of headings) left.set(normalizeHeading(heading.text), (left.get(normalizeHeading(heading.text)) ?? 0) + by);
  };
  count(after, 1);
  count(dropped, 1);
  const lost: Heading[] = [];
  for (const heading of before) {
    const key = normalizeHeading(heading.text);
    const n = left.get(key) ?? 0;
    if (n > 0) left.set(key, n - 1);
    else lost.push(heading);
  }
  return lost;
}

/** "Log", "Decisions" and 2 more: heading paths for a message. */
const headingNames = (headings: readonly Heading[]): string =>
  `${headings
    .slice(0, 3)
    .map((h) => JSON.stringify(h.path.join(' > ')))
    .join(', ')}${headings.length > 3 ? ` and ${headings.length - 3} more` : ''}`;

/**
 * What a change from `before` to `after` does to the outline that no change should do unasked, as a
 * phrase ("hides 2 sections…"); undefined when nothing. It hides headings (lostHeadings; `dropped`
 * are those it removes on purpose): a code fence or HTML block it opens and never closes turns every
 * later heading into text. Or it leaves a code fence open at the end, where the next section added
 * would be code. The guards of every writer of the bank compare outlines with it.
 */
export function outlineDamage(before: Outline, after: Outline, dropped: readonly Heading[] = []): string | undefined {
  const lost = lostHeadings(before.headings, after.headings, dropped);
  if (lost.length > 0) {
    return `hides ${lost.length} section(s): ${headingNames(lost)} (a code fence or HTML block opened and never closed turns every heading after it into text)`;
  }
  if (after.openFence && !before.openFence) return 'leaves a code fence open at the end (whatever is added after it would be code)';
  return undefined;
}
