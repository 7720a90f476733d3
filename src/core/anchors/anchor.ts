import { createHash } from 'node:crypto';
import type { Checkout } from '../../shared/checkout.js';
import type { Citation } from './cite.js';

export type { Checkout, FileRead } from '../../shared/checkout.js';

/**
 * Anchors: what a note (and, through consolidation, a bank statement) says of the code, tied to the
 * code as the writer saw it — the cited path, lines or symbol, the commit of the writer's checkout and a
 * hash of the cited text — and checked again at read, against the reader's own checkout. Two readers at
 * two commits of one space see two states, each true for its reader.
 *
 * The core never touches a disk for this: a checkout is a port (shared/checkout.ts), given by whoever
 * knows the folder (the CLI: the folder it runs in, or the project a stdio server serves), implemented
 * in config/checkout.ts over git's files and the file system.
 */

export interface Anchor extends Citation {
  /** The commit of the writer's checkout, when it had one. */
  commit?: string;
  /** The repository (its `origin`, canonical: `github.com/acme/webapp`), when it has one. */
  repo?: string;
  /** `sha256:` of the cited text (the lines, the symbol's block, or the whole file), line endings normalised. */
  hash: string;
  /** How many lines were cited (the symbol's block, the file's). */
  span: number;
  /** A short hash of each cited line (up to MAX_LINE_HASHES): how much of the text drifted is said from them. */
  line_hashes?: string[];
}

export type AnchorState = 'fresh' | 'drifted' | 'moved' | 'missing' | 'unverifiable';

export interface AnchorCheck {
  state: AnchorState;
  /** For people and agents: how much drifted, where it moved, why it cannot be checked. */
  detail: string;
  /** Where the cited text is now, when it moved. */
  now?: { path: string; lines: [number, number] };
}

/** The longest block a symbol's anchor covers. */
const MAX_SYMBOL_LINES = 200;
/** Files a moved text is looked for in. */
const MAX_CANDIDATES = 20;
/** Cited lines whose hashes an anchor keeps (a whole large file keeps none: its drift is said by size only). */
const MAX_LINE_HASHES = 400;

const normalise = (lines: readonly string[]): string => lines.map((line) => line.replace(/\s+$/, '')).join('\n');
const hashOf = (lines: readonly string[]): string => `sha256:${createHash('sha256').update(normalise(lines)).digest('hex')}`;
const lineHash = (line: string): string => createHash('sha256').update(line.trim()).digest('base64url').slice(0, 8);

/** The line a symbol is defined on (0-based), or -1. */
function definitionOf(lines: readonly string[], symbol: string): number {
  const name = symbol.split('.').pop() as string;
  const escaped = name.replace(/[$]/g, '\\$');
  const definition = new RegExp(
    String.raw`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum|const|let|var|def|fn|func|struct|trait|impl)\s+${escaped}\b`,
  );
  const member = new RegExp(String.raw`^\s*(?:(?:public|private|protected|static|readonly|async|get|set)\s+)*${escaped}\s*(?:\(|=|:)`);
  const found = lines.findIndex((line) => definition.test(line));
  return found >= 0 ? found : lines.findIndex((line) => member.test(line));
}

/** A symbol's block: its definition line to the line before the next one as little indented (or a closing brace at its indent). */
function blockOf(lines: readonly string[], start: number): [number, number] {
  const indent = (line: string) => line.length - line.trimStart().length;
  const base = indent(lines[start] as string);
  let end = start;
  for (let i = start + 1; i < lines.length && i - start < MAX_SYMBOL_LINES; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    if (indent(line) < base || (indent(line) === base && !/^\s*[}\])]/.test(line))) break;
    end = i;
    if (indent(line) === base) break; // the closing brace
  }
  return [start + 1, end + 1];
}

/** The cited lines of `lines` (1-based, inclusive) for a citation, or why there are none. */
function citedRange(lines: readonly string[], citation: Citation): [number, number] | string {
  if (citation.symbol) {
    const at = definitionOf(lines, citation.symbol);
    return at < 0 ? `no definition of ${citation.symbol}` : blockOf(lines, at);
  }
  if (citation.lines) {
    const [first, last] = citation.lines;
    return last > lines.length ? `the file has ${lines.length} lines, not ${last}` : [first, last];
  }
  return [1, lines.length];
}

/** An anchor for `citation` from `checkout`, or why it cannot be captured (the path outside it, missing, binary, too large). */
export async function captureAnchor(checkout: Checkout, citation: Citation): Promise<Anchor | { refused: string }> {
  const read = await checkout.read(citation.path);
  if ('missing' in read) return { refused: `${citation.path} is not in the checkout` };
  if ('unreadable' in read) return { refused: `${citation.path}: ${read.unreadable}` };
  const range = citedRange(read.lines, citation);
  if (typeof range === 'string') return { refused: `${citation.path}: ${range}` };
  const cited = read.lines.slice(range[0] - 1, range[1]);
  const commit = await checkout.commit();
  return {
    ...citation,
    ...(citation.symbol ? {} : citation.lines ? { lines: range } : {}),
    ...(commit ? { commit } : {}),
    ...(checkout.repo ? { repo: checkout.repo } : {}),
    hash: hashOf(cited),
    span: cited.length,
    ...(cited.length <= MAX_LINE_HASHES ? { line_hashes: cited.map(lineHash) } : {}),
  };
}

/** Where a text of `span` lines hashing to `hash` is in `lines`, by a sliding window (1-based), or undefined. */
function locate(lines: readonly string[], span: number, hash: string): [number, number] | undefined {
  for (let start = 0; start + span <= lines.length; start++) {
    if (hashOf(lines.slice(start, start + span)) === hash) return [start + 1, start + span];
  }
  return undefined;
}

/** How much of the cited text is still there: the share of its lines found, unchanged, in the text cited now. */
function driftOf(anchor: Anchor, now: readonly string[]): string {
  const what = anchor.symbol ? `the block of ${anchor.symbol}` : anchor.lines ? `lines ${anchor.lines.join('-')}` : 'the file';
  const size = now.length === anchor.span ? `${now.length} lines` : `${anchor.span} → ${now.length} lines`;
  if (!anchor.line_hashes) return `${what} changed (${size})`;
  const present = new Map<string, number>();
  for (const hash of now.map(lineHash)) present.set(hash, (present.get(hash) ?? 0) + 1);
  let kept = 0;
  for (const hash of anchor.line_hashes) {
    const left = present.get(hash) ?? 0;
    if (left > 0) {
      kept++;
      present.set(hash, left - 1);
    }
  }
  return `${what} changed: ${anchor.line_hashes.length - kept} of ${anchor.line_hashes.length} cited lines differ (${size})`;
}

/** Per reader's checkout: what an anchor's check found in a file at a version, so that a warm check reads nothing again. */
const checked = new WeakMap<Checkout, Map<string, { version: string; check: AnchorCheck }>>();
const CHECKS_KEPT = 20_000;

/** An anchor checked against `checkout` (the reader's): fresh, drifted, moved, missing or unverifiable. */
export async function checkAnchor(checkout: Checkout | undefined, anchor: Anchor): Promise<AnchorCheck> {
  if (!checkout) return { state: 'unverifiable', detail: 'no checkout of the project here' };
  if (anchor.repo && checkout.repo && anchor.repo !== checkout.repo)
    return { state: 'unverifiable', detail: `it cites ${anchor.repo}, this checkout is ${checkout.repo}` };
  const read = await checkout.read(anchor.path);
  if ('unreadable' in read) return { state: 'unverifiable', detail: `${anchor.path}: ${read.unreadable}` };
  if ('lines' in read) {
    // What the file itself says is kept by its version; what other files say (a symbol gone elsewhere) is asked again.
    const key = `${anchor.hash} ${anchor.path} ${anchor.lines?.join('-') ?? ''} ${anchor.symbol ?? ''}`;
    let known = checked.get(checkout);
    if (!known) checked.set(checkout, (known = new Map()));
    const hit = read.version === undefined ? undefined : known.get(key);
    if (hit && hit.version === read.version) return hit.check;
    const check = inFile(anchor, read.lines);
    if (check) {
      if (read.version !== undefined) {
        if (known.size >= CHECKS_KEPT) known.delete(known.keys().next().value as string);
        known.set(key, { version: read.version, check });
      }
      return check;
    }
  }
  const elsewhere = await movedElsewhere(checkout, anchor);
  if (elsewhere) return { state: 'moved', detail: `now at ${elsewhere.path}:${elsewhere.lines.join('-')}`, now: elsewhere };
  return 'missing' in read
    ? { state: 'missing', detail: `${anchor.path} is not in this checkout` }
    : { state: 'missing', detail: `${anchor.symbol ? `no definition of ${anchor.symbol}` : 'the cited lines are gone'} in ${anchor.path}` };
}

/** What the cited file alone says of an anchor: fresh, moved within it, drifted; undefined when its text is not there (looked for elsewhere). */
function inFile(anchor: Anchor, lines: readonly string[]): AnchorCheck | undefined {
  const range = citedRange(lines, anchor);
  if (typeof range !== 'string' && hashOf(lines.slice(range[0] - 1, range[1])) === anchor.hash) return { state: 'fresh', detail: 'as cited' };
  // Cited lines may have moved within the file; a symbol is found by its definition, a whole file is the file.
  const found = anchor.lines && !anchor.symbol ? locate(lines, anchor.span, anchor.hash) : undefined;
  if (found) return { state: 'moved', detail: `now at ${anchor.path}:${found.join('-')}`, now: { path: anchor.path, lines: found } };
  if (typeof range !== 'string') return { state: 'drifted', detail: driftOf(anchor, lines.slice(range[0] - 1, range[1])) };
  return undefined;
}

/** The cited text in another file: looked for by its files holding the symbol's definition, or (lines) nothing to go by but the hash. */
async function movedElsewhere(checkout: Checkout, anchor: Anchor): Promise<{ path: string; lines: [number, number] } | undefined> {
  if (!anchor.symbol) return undefined;
  const name = anchor.symbol.split('.').pop() as string;
  const candidates = (await checkout.find(name)).filter((path) => path !== anchor.path).slice(0, MAX_CANDIDATES);
  for (const path of candidates) {
    const read = await checkout.read(path);
    if (!('lines' in read)) continue;
    const at = definitionOf(read.lines, anchor.symbol);
    if (at < 0) continue;
    const block = blockOf(read.lines, at);
    if (hashOf(read.lines.slice(block[0] - 1, block[1])) === anchor.hash) return { path, lines: block };
  }
  return undefined;
}
