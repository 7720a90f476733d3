import { marked, type Token } from 'marked';
import { type Outline, outlineOf } from './outline.js';

/** A bank file's section: from its heading to the next heading of any level. */
export interface BankSection {
  id: string;
  file: string;
  /** Heading path, outermost first; [] for text before the first heading. */
  path: string[];
  text: string;
}

/** A section with where it runs in its file: [start, end), untrimmed (consolidation's bank view uses them). */
export interface BankSectionAt extends BankSection {
  start: number;
  end: number;
}

/**
 * A bank file cut into its sections (each from its heading to the next heading of any level).
 * Offsets are into the text with its line endings normalised (outline.ts), as every edit reads it.
 */
export function bankSections(file: string, content: string): BankSectionAt[] {
  let outline: Outline;
  try {
    outline = outlineOf(content);
  } catch {
    outline = { text: content, headings: [], openFence: false };
  }
  const { text: markdown, headings } = outline;
  const sections: BankSectionAt[] = [];
  const push = (path: string[], start: number, end: number) => {
    const text = markdown.slice(start, end).trim();
    if (text.length > 0) sections.push({ id: `b:${file}#${sections.length}`, file, path, text, start, end });
  };
  push([], 0, headings[0]?.start ?? markdown.length);
  for (const [i, heading] of headings.entries()) push(heading.path, heading.start, headings[i + 1]?.start ?? markdown.length);
  return sections;
}

/** Fenced code blocks of a Markdown text, at any depth (in list items, block quotes). */
export function fencedCode(markdown: string): string[] {
  const found: string[] = [];
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'code' && (token as { codeBlockStyle?: string }).codeBlockStyle !== 'indented') found.push(String(token.text));
      const nested = token as { tokens?: Token[]; items?: Token[] };
      if (nested.tokens) walk(nested.tokens);
      if (nested.items) walk(nested.items);
    }
  };
  walk(marked.lexer(markdown));
  return found;
}
