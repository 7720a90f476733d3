import { measureTokens } from '../bank/budget.js';
import { outlineOf } from '../markdown/outline.js';
import { fencedCode } from '../markdown/sections.js';

/**
 * A bank file cut into the sections compaction may digest, on the same Markdown parse as section
 * edits. A section is a heading's own text: its heading line and what follows, up to the next
 * heading of any level. So every byte of the file belongs to exactly one section — except the text
 * before the first heading and headings with nothing under them, which are never offered and stay
 * verbatim — and a digest of one section never swallows another.
 */
export interface Section {
  id: string;
  /** Heading path, outermost first. */
  path: string[];
  start: number;
  end: number;
  /** The section's full text, heading line included. */
  text: string;
  heading: { depth: number; text: string; raw: string };
  tokens: number;
  /** Newest sections and those holding code: kept whole unless the budget cannot be met otherwise. */
  protected: boolean;
  /** Lines holding a date (YYYY-MM-DD), trimmed, heading line excluded: a digest keeps them. */
  datedLines: string[];
  /** Fenced code blocks' code: a digest keeps them. */
  codeBlocks: string[];
}

export interface SplitFile {
  filename: string;
  content: string;
  tokens: number;
  budget: number;
  sections: Section[];
}

/** Newest sections, walking back from the end of the file, are protected while they hold at most this share of the budget. */
export const NEWEST_SHARE = 0.3;

const DATE = /\b\d{4}-\d{2}-\d{2}\b/;

/**
 * Cuts `content` into sections and marks the protected ones: the last section always, then the
 * ones before it, newest first, while the protected total stays within 30% of the budget (new
 * entries are added at the end of a file); and any section holding a fenced code block.
 */
export function splitSections(filename: string, stored: string, budget: number): SplitFile {
  // The file as edits read it (line endings normalised): the digests are put back into this text.
  const { text: content, headings } = outlineOf(stored);
  const sections: Section[] = [];
  for (const [i, heading] of headings.entries()) {
    const end = headings[i + 1]?.start ?? content.length;
    const text = content.slice(heading.start, end);
    const body = content.slice(heading.bodyStart, end);
    if (body.trim() === '') continue;
    const codeBlocks = fencedCode(body);
    sections.push({
      id: `s${sections.length + 1}`,
      path: heading.path,
      start: heading.start,
      end,
      text,
      heading: { depth: heading.depth, text: heading.text, raw: content.slice(heading.start, heading.bodyStart) },
      tokens: measureTokens(text),
      protected: codeBlocks.length > 0,
      datedLines: datedLines(body),
      codeBlocks,
    });
  }
  let newest = 0;
  for (let i = sections.length - 1; i >= 0; i--) {
    const section = sections[i] as Section;
    if (i < sections.length - 1 && newest + section.tokens > budget * NEWEST_SHARE) break;
    section.protected = true;
    newest += section.tokens;
  }
  return { filename, content, tokens: measureTokens(content), budget, sections };
}

export const datedLines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => DATE.test(line));
