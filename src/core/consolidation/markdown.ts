import { marked } from 'marked';
import { invalid } from '../../shared/errors.js';

/**
 * Section edits on a real Markdown parse (marked's lexer): a `#` inside a code fence or a block
 * quote is no heading, setext headings count, and a section runs from its heading to the next
 * heading of the same or a higher level. Edits address a section by its heading path.
 */
export type SectionOp = 'replace' | 'append' | 'prepend' | 'add' | 'delete';

export interface SectionEdit {
  op: SectionOp;
  /** Heading path, outermost first: ["Architecture", "Database"]. For `add`: the parent ([] = top level). */
  path: string[];
  /** New body (replace), text to insert (append, prepend), or the new section's body (add). */
  content?: string;
  /** For `add`: the new section's heading text. */
  title?: string;
}

interface Heading {
  depth: number;
  text: string;
  /** Offset of the heading's first character. */
  start: number;
  /** Offset just past the heading (its line, or its two setext lines). */
  bodyStart: number;
  /** Offset where the section ends: the next heading of the same or higher level, or the end. */
  end: number;
}

const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The document's top-level headings with their section bounds. */
export function headingsOf(markdown: string): Heading[] {
  const headings: Heading[] = [];
  let offset = 0;
  for (const token of marked.lexer(markdown)) {
    if (token.type === 'heading') {
      headings.push({ depth: token.depth as number, text: String(token.text), start: offset, bodyStart: offset + token.raw.length, end: markdown.length });
    }
    offset += token.raw.length;
  }
  if (offset !== markdown.length) throw new Error('markdown lexer lost characters'); // never seen; refuse to edit blind
  for (const [i, heading] of headings.entries()) {
    const next = headings.slice(i + 1).find((h) => h.depth <= heading.depth);
    if (next) heading.end = next.start;
  }
  return headings;
}

/** Finds the section at `path`: each segment is a heading nested in the previous one's section. */
function findSection(headings: Heading[], path: string[], file: string): Heading {
  let scope = { start: 0, end: Number.POSITIVE_INFINITY, depth: 0 };
  let found: Heading | undefined;
  for (const segment of path) {
    const candidates = headings.filter(
      (h) => h.start >= scope.start && h.start < scope.end && h.depth > scope.depth && normalize(h.text) === normalize(segment),
    );
    const match = candidates.sort((a, b) => a.depth - b.depth)[0];
    if (!match) throw invalid(`${file}: no section ${path.map((p) => JSON.stringify(p)).join(' > ')} (missing ${JSON.stringify(segment)})`);
    found = match;
    scope = { start: match.start, end: match.end, depth: match.depth };
  }
  if (!found) throw invalid(`${file}: an edit needs a heading path`);
  return found;
}

/** Where the section at `path` runs in `markdown` (with its sub-sections), as an edit would find it; undefined if none. */
export function sectionSpan(markdown: string, path: string[]): { start: number; end: number } | undefined {
  const source = markdown.endsWith('\n') || markdown === '' ? markdown : `${markdown}\n`;
  try {
    const { start, end } = findSection(headingsOf(source), path, '');
    return { start, end };
  } catch {
    return undefined;
  }
}

/** Text as a block: ends with exactly one newline, unless empty. */
const block = (text: string): string => (text.trim() === '' ? '' : `${text.replace(/\s+$/, '')}\n`);

/** Applies one edit and returns the new document. A missing heading is an `invalid_input` error. */
export function applySectionEdit(markdown: string, edit: SectionEdit, file: string): string {
  const source = markdown.endsWith('\n') || markdown === '' ? markdown : `${markdown}\n`;
  const headings = headingsOf(source);
  const content = edit.content ?? '';
  if (edit.op === 'add') {
    const title = (edit.title ?? '').trim();
    if (!title) throw invalid(`${file}: 'add' needs a title for the new section`);
    const parent = edit.path.length > 0 ? findSection(headings, edit.path, file) : undefined;
    const depth = Math.min(6, (parent?.depth ?? headings[0]?.depth ?? 1) + (parent ? 1 : 0)) || 1;
    const at = parent ? parent.end : source.length;
    const before = source.slice(0, at);
    const separator = before === '' || before.endsWith('\n\n') ? '' : '\n';
    return `${before}${separator}${'#'.repeat(depth)} ${title}\n\n${block(content)}${at < source.length ? '\n' : ''}${source.slice(at)}`;
  }
  const section = findSection(headings, edit.path, file);
  const before = source.slice(0, section.start);
  const heading = source.slice(section.start, section.bodyStart).replace(/\n*$/, '\n');
  const body = source.slice(section.bodyStart, section.end).replace(/^\n+/, '').replace(/\s+$/, '');
  const tail = source.slice(section.end);
  const gap = tail === '' ? '' : '\n';
  const rebuilt = (...blocks: string[]) =>
    `${before}${heading}\n${blocks
      .filter((b) => b !== '')
      .map(block)
      .join('\n')}${gap}${tail}`;
  switch (edit.op) {
    case 'delete':
      return before + tail;
    case 'replace':
      return rebuilt(content);
    case 'prepend':
      return rebuilt(content, body);
    case 'append':
      return rebuilt(body, content);
    default:
      throw invalid(`${file}: unknown edit '${String(edit.op)}'`);
  }
}
