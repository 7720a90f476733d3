import { ReplyFormatError } from '../../llm/reply-json.js';
import { invalid } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { type Block, BlockDocument, blocksOf, hasBody, lastChars, Pieces, stripLeadingNewlines, trimEnd } from './blocks.js';
import { type Heading, lostHeadings, normalizeHeading, outlineDamage, outlineOf } from './outline.js';

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

/** "append \"Log\"", "add \"Ideas\" under \"Journal\"": an edit as a refusal names it. */
function describe(edit: SectionEdit): string {
  const path = JSON.stringify(edit.path.join(' > '));
  if (edit.op !== 'add') return `${edit.op} ${path}`;
  return `add ${JSON.stringify(oneLineTitle(edit.title))}${edit.path.length > 0 ? ` under ${path}` : ''}`;
}

/** A new section's title: one line (a line break would end the heading and start its body). */
const oneLineTitle = (title: string | undefined): string =>
  normalizeLineEndings(title ?? '')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * Section edits applied one after the other to one document, each at the cost of what it writes:
 * the document is a list of heading blocks (blocks.ts) read once, and read again once at the end
 * (`result`), where an outline the edits damaged — a code fence or an HTML block opened and never
 * closed, hiding the headings after it — is refused, naming the edit that did it. A missing heading
 * is refused at its edit. Callers with long lists may yield between edits (the work is all here).
 */
export class SectionEditor {
  private readonly doc: BlockDocument;
  private readonly edits: SectionEdit[] = [];

  constructor(
    markdown: string,
    private readonly file: string,
  ) {
    this.doc = new BlockDocument(outlineOf(asSource(markdown)));
  }

  /** The block starting the section at `path`, or a clear error naming the segment no heading matched. */
  private section(path: readonly string[]): number {
    const { at, missing } = this.doc.find(path);
    if (missing !== undefined) throw invalid(`${this.file}: no section ${path.map((p) => JSON.stringify(p)).join(' > ')} (missing ${JSON.stringify(missing)})`);
    if (at === undefined) throw invalid(`${this.file}: an edit needs a heading path`);
    return at;
  }

  apply(edit: SectionEdit): void {
    const n = this.edits.push(edit) - 1;
    const content = block(normalizeLineEndings(edit.content ?? ''));
    const { blocks } = this.doc;
    if (edit.op === 'add') {
      const title = oneLineTitle(edit.title);
      if (!title) throw invalid(`${this.file}: 'add' needs a title for the new section`);
      const parent = edit.path.length > 0 ? this.section(edit.path) : undefined;
      const depth = Math.min(6, parent === undefined ? (blocks[1]?.depth ?? 1) : (blocks[parent] as Block).depth + 1) || 1;
      const at = parent === undefined ? blocks.length : this.doc.end(parent);
      const before = blocks[at - 1] as Block;
      if (!this.doc.emptyBefore(at) && lastChars(before, 2) !== '\n\n') before.parts.push('\n');
      const head = `${'#'.repeat(depth)} ${title}\n`;
      const added: Block = { depth, text: title, key: normalizeHeading(title), head, parts: new Pieces(), added: n, at };
      // The title as the lexer reads it (a closing `#` sequence is no part of it).
      const lexed = outlineOf(head).headings[0];
      if (lexed) Object.assign(added, { text: lexed.text, key: normalizeHeading(lexed.text) });
      added.parts.push('\n');
      this.doc.splice(at, 0, ...place(added, content, at < blocks.length ? '\n' : '', n));
      return;
    }
    const i = this.section(edit.path);
    const j = this.doc.end(i);
    const first = blocks[i] as Block;
    const last = blocks[j - 1] as Block;
    const gap = j < blocks.length ? '\n' : '';
    // The heading line, then one newline (kept in the heading: the body may change at its start).
    const heading = () => {
      first.head = `${first.head.replace(/\n*$/, '\n')}\n`;
    };
    switch (edit.op) {
      case 'delete':
        this.doc.splice(i, j - i);
        (blocks[i - 1] as Block).edit = n;
        return;
      case 'replace':
        heading();
        first.parts = new Pieces();
        this.doc.splice(i, j - i, ...place(first, content, gap, n));
        return;
      case 'append':
      case 'prepend': {
        first.head = first.head.replace(/\n*$/, '\n');
        stripLeadingNewlines(first);
        heading();
        if (j - i === 1 && !hasBody(first)) {
          first.parts = new Pieces();
          this.doc.splice(i, 1, ...place(first, content, gap, n));
          return;
        }
        // The section's end: its last block trimmed, one newline (and, appending, a blank line and the content).
        trimEnd(last);
        last.parts.push('\n');
        last.edit = n;
        if (edit.op === 'append' && content !== '') {
          last.parts.push('\n');
          this.doc.splice(j - 1, 1, ...place(last, content, gap, n));
          return;
        }
        last.parts.push(gap);
        if (edit.op === 'prepend' && content !== '') {
          // The content first, then a blank line and the body that was there: cut at the content's headings, the body goes under the last.
          const body = first.parts;
          first.parts = new Pieces();
          const placed = place(first, content, '\n', n);
          const end = placed[placed.length - 1] as Block;
          body.unshift(...end.parts.toArray());
          end.parts = body;
          this.doc.splice(i, 1, ...placed);
        }
        return;
      }
      default:
        throw invalid(`${this.file}: unknown edit '${String(edit.op)}'`);
    }
  }

  /**
   * The edited document, once its real outline is checked against the blocks': an edit removes only
   * the section it deletes or the sub-sections of the one it replaces, leaves every heading it adds a
   * heading, and leaves no code fence open at the end that was not open before.
   */
  result(): string {
    const text = this.doc.render();
    const real = outlineOf(text);
    const claimed = this.doc.outline(text, this.doc.source.openFence);
    const lost = lostHeadings(claimed.headings, real.headings);
    const damage = outlineDamage(claimed, real);
    if (!damage) return text;
    // Whom to name: the edit that last wrote at or before the first heading lost (or the end).
    const { blocks } = this.doc;
    const at = lost[0] ? claimed.headings.indexOf(lost[0]) + 1 : blocks.length - 1;
    let k = at;
    while (k > 0 && (blocks[k] as Block).edit === undefined) k--;
    const n = (blocks[k] as Block).edit ?? this.edits.length - 1;
    const edit = this.edits[n] as SectionEdit;
    const what = describe(edit);
    if (lost.length > 0 && (blocks[at] as Block).added === n) {
      throw invalid(
        `${this.file}: the edit (${what}) leaves no section ${JSON.stringify(oneLineTitle(edit.title))}: its heading ends up inside a code block the file leaves open`,
      );
    }
    throw invalid(
      `${this.file}: the edit (${what}) ${damage}; an edit may remove only the section it deletes or the sub-sections of the one it replaces, and closes every code fence it opens`,
    );
  }
}

/**
 * `content` added at the end of `target`'s text, then `after`, cut into blocks at the headings the
 * content holds: the target and the blocks of those headings, the last one ending with `after`.
 */
function place(target: Block, content: string, after: string, n: number): Block[] {
  const { lead, blocks } = blocksOf(content);
  target.parts.push(lead);
  for (const block of [target, ...blocks]) block.edit = n;
  (blocks[blocks.length - 1] ?? target).parts.push(after);
  return [target, ...blocks];
}

/** Applies section edits in order and returns the new document (SectionEditor); none: the text as it is. */
export function applySectionEdits(markdown: string, edits: readonly SectionEdit[], file: string): string {
  if (edits.length === 0) return markdown;
  const editor = new SectionEditor(markdown, file);
  for (const edit of edits) editor.apply(edit);
  return editor.result();
}

/** applySectionEdits, awaiting `pause` between edits (shared/yield.ts): other requests are answered meanwhile. */
export async function applySectionEditsInSlices(markdown: string, edits: readonly SectionEdit[], file: string, pause: () => Promise<void>): Promise<string> {
  if (edits.length === 0) return markdown;
  const editor = new SectionEditor(markdown, file);
  for (const edit of edits) {
    editor.apply(edit);
    await pause();
  }
  return editor.result();
}

/** One edit (applySectionEdits). */
export const applySectionEdit = (markdown: string, edit: SectionEdit, file: string): string => applySectionEdits(markdown, [edit], file);

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
