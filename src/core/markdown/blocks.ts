import { type Heading, normalizeHeading, type Outline, outlineOf } from './outline.js';

/**
 * A Markdown document as the section edits change it: one block per heading (its heading line and
 * its own text, up to the next heading of any level), after a preamble. A section is a block and
 * the blocks after it that are deeper; an edit rewrites one or two blocks' ends, inserts or removes
 * blocks, and never copies or re-reads the rest, so a plan of N edits costs what its edits hold, not
 * N times the file (issue 39). The document is read (lexed) once when built and once when
 * rendered, where the outline the blocks claim is compared with the one the text really has.
 */
export interface Block {
  /** 0 for the preamble (the text before the first heading), else the heading's level. */
  depth: number;
  /** The heading's text as the lexer reads it ('' for the preamble). */
  text: string;
  /** `text` as paths match it (normalizeHeading). */
  key: string;
  /** The heading's raw line(s), a setext heading's two ('' for the preamble). */
  head: string;
  /** Its own text after the heading, in pieces: an edit adds or trims pieces, never rebuilds the whole. */
  parts: Pieces;
  /** Index of the last edit that wrote into it: whom to name when the outline comes out damaged. */
  edit?: number;
  /** Index of the `add` that created it: its heading is the one that edit promised. */
  added?: number;
  /** Its place in the document, valid while the document's positions are. */
  at: number;
}

/**
 * A block's own text in pieces, added or trimmed at either end at a constant cost (a deque): a
 * section appended to or prepended to N times costs N, not N² (an array's unshift moves every piece).
 */
export class Pieces {
  private items: (string | undefined)[];
  private start = 0;

  constructor(items: readonly string[] = []) {
    this.items = items.filter((item) => item !== '');
  }

  get length(): number {
    return this.items.length - this.start;
  }

  get first(): string | undefined {
    return this.items[this.start];
  }

  get last(): string | undefined {
    return this.length > 0 ? this.items[this.items.length - 1] : undefined;
  }

  /** Adds pieces at the end ('' left out). */
  push(...pieces: string[]): void {
    for (const piece of pieces) if (piece !== '') this.items.push(piece);
  }

  /** Adds pieces at the start, in the order given ('' left out). */
  unshift(...pieces: string[]): void {
    for (const piece of pieces.filter((p) => p !== '').reverse()) {
      if (this.start === 0) {
        const room = Math.max(8, this.length);
        this.items = [...new Array<undefined>(room), ...this.items.slice(this.start)];
        this.start = room;
      }
      this.items[--this.start] = piece;
    }
  }

  /** Replaces the first piece ('' removes it). */
  setFirst(piece: string): void {
    if (piece !== '') this.items[this.start] = piece;
    else this.items[this.start++] = undefined;
  }

  /** Replaces the last piece ('' removes it). */
  setLast(piece: string): void {
    if (piece !== '') this.items[this.items.length - 1] = piece;
    else this.items.pop();
  }

  some(test: (piece: string) => boolean): boolean {
    for (let i = this.start; i < this.items.length; i++) if (test(this.items[i] as string)) return true;
    return false;
  }

  /** The last `n` characters (fewer if there are fewer). */
  tail(n: number): string {
    let tail = '';
    for (let i = this.items.length - 1; i >= this.start && tail.length < n; i--) tail = (this.items[i] as string) + tail;
    return tail.slice(-n);
  }

  /** The pieces, first to last. */
  toArray(): string[] {
    return this.items.slice(this.start) as string[];
  }

  join(): string {
    return this.toArray().join('');
  }
}

/** A heading-like line (ATX, or a setext underline): text without one has no heading to lex. */
const HEADING_LINE = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)/m;

/** The blocks of a text whose first block is the preamble (`lead`), the rest one per heading. */
export function blocksOf(text: string): { lead: string; blocks: Block[] } {
  if (!HEADING_LINE.test(text)) return { lead: text, blocks: [] };
  return splitOutline(outlineOf(text));
}

function splitOutline({ text, headings }: Outline): { lead: string; blocks: Block[] } {
  const blocks = headings.map((h, i) => ({
    depth: h.depth,
    text: h.text,
    key: normalizeHeading(h.text),
    head: text.slice(h.start, h.bodyStart),
    parts: new Pieces([text.slice(h.bodyStart, headings[i + 1]?.start ?? text.length)]),
    at: 0,
  }));
  return { lead: text.slice(0, headings[0]?.start ?? text.length), blocks };
}

/** A block's text as written. */
const render = (block: Block): string => block.head + block.parts.join();

/** Whether a block holds anything but whitespace after its heading. */
export const hasBody = (block: Block): boolean => block.parts.some((part) => /\S/.test(part));

/** Removes the newlines a block's own text starts with. */
export function stripLeadingNewlines(block: Block): void {
  for (let first = block.parts.first; first !== undefined && first.charCodeAt(0) === 10; first = block.parts.first)
    block.parts.setFirst(first.replace(/^\n+/, ''));
}

/** Removes the whitespace a block ends with, into its heading line if its own text is only whitespace. */
export function trimEnd(block: Block): void {
  for (let last = block.parts.last; last !== undefined; last = block.parts.last) {
    const trimmed = last.replace(/\s+$/, '');
    block.parts.setLast(trimmed);
    if (trimmed !== '') return;
  }
  block.head = block.head.replace(/\s+$/, '');
}

/** The last `n` characters a block renders (fewer if it is shorter). */
export function lastChars(block: Block, n: number): string {
  const tail = block.parts.tail(n);
  return tail.length < n ? (block.head + tail).slice(-n) : tail;
}

export class BlockDocument {
  readonly blocks: Block[];
  private readonly byKey = new Map<string, Set<Block>>();
  private positioned = true;

  constructor(readonly source: Outline) {
    const { lead, blocks } = splitOutline(source);
    this.blocks = [{ depth: 0, text: '', key: '', head: '', parts: new Pieces([lead]), at: 0 }, ...blocks];
    this.blocks.forEach((block, i) => {
      block.at = i;
      if (i > 0) this.indexBlock(block);
    });
  }

  private indexBlock(block: Block): void {
    const set = this.byKey.get(block.key) ?? new Set<Block>();
    set.add(block);
    this.byKey.set(block.key, set);
  }

  /** Replaces `count` blocks from `start` with `inserted`, keeping the heading index. */
  splice(start: number, count: number, ...inserted: Block[]): void {
    for (const gone of this.blocks.splice(start, count, ...inserted)) this.byKey.get(gone.key)?.delete(gone);
    for (const block of inserted) this.indexBlock(block);
    this.positioned = false;
  }

  private positions(): void {
    if (this.positioned) return;
    this.blocks.forEach((block, i) => {
      block.at = i;
    });
    this.positioned = true;
  }

  /** Index just past the section that starts at block `i`: the next block of its level or higher. */
  end(i: number): number {
    const depth = (this.blocks[i] as Block).depth;
    let j = i + 1;
    while (j < this.blocks.length && (this.blocks[j] as Block).depth > depth) j++;
    return j;
  }

  /**
   * The block that starts the section at `path`: each segment is a heading nested in the previous
   * one's section, the shallowest that matches, the first of those. `missing`: the first segment no
   * heading matched. Looked up in an index of headings, not by reading the document.
   */
  find(path: readonly string[]): { at?: number; missing?: string } {
    this.positions();
    let from = 0;
    let to = this.blocks.length;
    let depth = 0;
    let found: number | undefined;
    for (const segment of path) {
      let best: Block | undefined;
      for (const block of this.byKey.get(normalizeHeading(segment)) ?? []) {
        if (block.at < from || block.at >= to || block.depth <= depth) continue;
        if (!best || block.depth < best.depth || (block.depth === best.depth && block.at < best.at)) best = block;
      }
      if (!best) return { missing: segment };
      found = best.at;
      from = best.at;
      to = this.end(best.at);
      depth = best.depth;
    }
    return found === undefined ? {} : { at: found };
  }

  /** Whether nothing is written before block `at` (an empty preamble, and `at` the first heading). */
  emptyBefore(at: number): boolean {
    return at <= 1 && render(this.blocks[0] as Block) === '';
  }

  render(): string {
    return this.blocks.map(render).join('');
  }

  /** The outline the blocks claim, paths included (offsets are not kept: 0). */
  outline(text: string, openFence: boolean): Outline {
    const open: Heading[] = [];
    const headings = this.blocks.slice(1).map((block) => {
      while (open.length > 0 && (open[open.length - 1] as Heading).depth >= block.depth) open.pop();
      const heading: Heading = {
        depth: block.depth,
        text: block.text,
        path: [...(open[open.length - 1]?.path ?? []), block.text.trim()],
        start: 0,
        bodyStart: 0,
        end: 0,
      };
      open.push(heading);
      return heading;
    });
    return { text, headings, openFence };
  }
}
