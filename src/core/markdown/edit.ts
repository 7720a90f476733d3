import { ReplyFormatError } from '../../llm/reply-json.js';
import { invalid } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { type Heading, normalizeHeading, type Outline, outlineDamage, outlineOf } from './outline.js';

/**
 * Section edits on a real Markdown parse (marked's lexer): a `#` inside a code fence or a block
 * quote is no heading, setext headings count, and a section runs from its heading to the next
 * heading of the same or a higher level. Edits address a section by its heading path.
 *
 * Every text is read with its line endings normalised first (shared/line-endings.ts): the lexer
 * reads `\r\n` as `\n`, so offsets on a Windows file would not match it. What the model returns
 * (outlines, edited documents) is in that normalised form.
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

/**
 * The section at `path`: each segment is a heading nested in the previous one's section (the
 * shallowest that matches). `missing`: the first segment no heading matched.
 */
function walkSections(headings: readonly Heading[], path: readonly string[]): { found?: Heading; missing?: string } {
  let scope = { start: 0, end: Number.POSITIVE_INFINITY, depth: 0 };
  let found: Heading | undefined;
  for (const segment of path) {
    const candidates = headings.filter(
      (h) => h.start >= scope.start && h.start < scope.end && h.depth > scope.depth && normalizeHeading(h.text) === normalizeHeading(segment),
    );
    const match = candidates.sort((a, b) => a.depth - b.depth)[0];
    if (!match) return { missing: segment };
    found = match;
    scope = { start: match.start, end: match.end, depth: match.depth };
  }
  return found ? { found } : {};
}

/** The section at `path` as an edit finds it, or undefined. */
export const sectionAt = (headings: readonly Heading[], path: readonly string[]): Heading | undefined => walkSections(headings, path).found;

/** The section at `path`, or a clear error naming the segment no heading matched. */
function findSection(headings: Heading[], path: string[], file: string): Heading {
  const { found, missing } = walkSections(headings, path);
  if (missing !== undefined) throw invalid(`${file}: no section ${path.map((p) => JSON.stringify(p)).join(' > ')} (missing ${JSON.stringify(missing)})`);
  if (!found) throw invalid(`${file}: an edit needs a heading path`);
  return found;
}

/** The text as edits read it: line endings normalised, ending with a newline unless empty. */
const asSource = (markdown: string): string => {
  const text = normalizeLineEndings(markdown);
  return text.endsWith('\n') || text === '' ? text : `${text}\n`;
};

/**
 * Where the section at `path` runs in `markdown` (with its sub-sections), as an edit would find it;
 * undefined if none. Offsets are into the text with its line endings normalised.
 */
export function sectionSpan(markdown: string, path: string[]): { start: number; end: number } | undefined {
  try {
    const { start, end } = findSection(outlineOf(asSource(markdown)).headings, path, '');
    return { start, end };
  } catch {
    return undefined;
  }
}

/** Text as a block: ends with exactly one newline, unless empty. */
const block = (text: string): string => (text.trim() === '' ? '' : `${text.replace(/\s+$/, '')}\n`);

/**
 * Applies one edit and returns the new document. A missing heading is an `invalid_input` error; so
 * is an edit whose result loses a heading it does not name (its text opens a code fence it never
 * closes, which turns every later heading into code): an edit removes only the section it deletes,
 * or the sub-sections of the one it replaces.
 */
export function applySectionEdit(markdown: string, edit: SectionEdit, file: string): string {
  const source = asSource(markdown);
  const outline = outlineOf(source);
  const { headings } = outline;
  const content = normalizeLineEndings(edit.content ?? '');
  let result: string;
  let dropped: Heading[] = [];
  let added: string | undefined;
  if (edit.op === 'add') {
    const title = normalizeLineEndings(edit.title ?? '').trim();
    if (!title) throw invalid(`${file}: 'add' needs a title for the new section`);
    const parent = edit.path.length > 0 ? findSection(headings, edit.path, file) : undefined;
    const depth = Math.min(6, (parent?.depth ?? headings[0]?.depth ?? 1) + (parent ? 1 : 0)) || 1;
    const at = parent ? parent.end : source.length;
    const before = source.slice(0, at);
    const separator = before === '' || before.endsWith('\n\n') ? '' : '\n';
    result = `${before}${separator}${'#'.repeat(depth)} ${title}\n\n${block(content)}${at < source.length ? '\n' : ''}${source.slice(at)}`;
    added = title;
  } else {
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
    const within = (from: number) => headings.filter((h) => h.start >= from && h.start < section.end);
    switch (edit.op) {
      case 'delete':
        result = before + tail;
        dropped = within(section.start);
        break;
      case 'replace':
        result = rebuilt(content);
        dropped = within(section.bodyStart);
        break;
      case 'prepend':
        result = rebuilt(content, body);
        break;
      case 'append':
        result = rebuilt(body, content);
        break;
      default:
        throw invalid(`${file}: unknown edit '${String(edit.op)}'`);
    }
  }
  checkOutlineKept(file, edit, outline, outlineOf(result), dropped, added);
  return result;
}

/** An edit keeps every heading it does not remove and closes its fences, and an `add` leaves its new heading a heading. */
function checkOutlineKept(file: string, edit: SectionEdit, before: Outline, after: Outline, dropped: Heading[], added: string | undefined): void {
  const path = JSON.stringify(edit.path.join(' > '));
  const what = added === undefined ? `${edit.op} ${path}` : `add ${JSON.stringify(added)}${edit.path.length > 0 ? ` under ${path}` : ''}`;
  const damage = outlineDamage(before, after, dropped);
  if (damage) {
    throw invalid(
      `${file}: the edit (${what}) ${damage}; an edit may remove only the section it deletes or the sub-sections of the one it replaces, and closes every code fence it opens`,
    );
  }
  // The new heading is a line of its own: it is no heading only inside a block the file leaves open.
  if (added !== undefined && after.headings.length <= before.headings.length) {
    throw invalid(`${file}: the edit (${what}) leaves no section ${JSON.stringify(added)}: its heading ends up inside a code block the file leaves open`);
  }
}

const OPS: SectionOp[] = ['replace', 'append', 'prepend', 'add', 'delete'];

/** One section edit as a plan (or a person's bank_write) gives it: `{op, section, content?, title?}`. */
export function sectionEdit(raw: unknown, where: string): SectionEdit {
  if (!isObject(raw)) throw new ReplyFormatError(`${where} is not an object`);
  const op = String(raw.op ?? raw.action ?? '').toLowerCase() as SectionOp;
  if (!OPS.includes(op)) throw new ReplyFormatError(`${where}: "op" must be one of ${OPS.join(', ')}`);
  const section = raw.section ?? raw.heading ?? raw.path ?? [];
  const path = Array.isArray(section)
    ? section.map(String)
    : String(section)
        .split('>')
        .map((part) => part.replace(/^#+\s*/, '').trim())
        .filter(Boolean);
  if (op !== 'add' && path.length === 0) throw new ReplyFormatError(`${where}: "section" names no heading`);
  return {
    op,
    path,
    ...(typeof raw.content === 'string' ? { content: raw.content } : {}),
    ...(typeof raw.title === 'string' ? { title: raw.title.replace(/^#+\s*/, '') } : {}),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
