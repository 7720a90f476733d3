/**
 * The code a note's text names: `path:line`, `path:start-end`, a path alone, or a symbol in a path
 * ("`retryRequest` in src/net/client.ts"). Only what looks like a path of a repository counts: a name
 * with a folder or an extension, relative, no `..`, no scheme. What the text names is a citation; an
 * anchor is a citation captured from a checkout (anchor.ts).
 */

export interface Citation {
  /** Relative to the repository's top, with `/`. */
  path: string;
  /** The cited lines, 1-based and inclusive, when the text gives them. */
  lines?: [number, number];
  /** The cited symbol, when the text names one in the path. */
  symbol?: string;
}

const PATH = String.raw`(?:[\w@.+-]+/)*[\w@+-][\w@.+-]*\.[A-Za-z][\w]{0,9}`;
const LINES = String.raw`(?::(\d{1,7})(?:\s*[-–]\s*(\d{1,7}))?)?`;
const SYMBOL = String.raw`\`([A-Za-z_$][\w$.]{1,80})(?:\(\))?\`\s+in\s+\`?`;
const CITATION = new RegExp(String.raw`(?:${SYMBOL})?(?<![\w/.:-])(${PATH})${LINES}`, 'g');

/** Whether `path` can be a path inside a repository (relative, no parent steps, not a URL host or a version). */
export function isRepositoryPath(path: string): boolean {
  if (path.startsWith('/') || path.split('/').some((part) => part === '..' || part === '.' || part === '')) return false;
  if (/^\d+(\.\d+)+$/.test(path)) return false; // a version number
  return path.includes('/') || /\.[A-Za-z]{1,10}$/.test(path);
}

/** The citations of `text`, in order, each once. */
export function citationsIn(text: string): Citation[] {
  const found = new Map<string, Citation>();
  for (const match of text.matchAll(CITATION)) {
    const [, symbol, path, start, end] = match;
    if (!path || !isRepositoryPath(path)) continue;
    // A host name (example.com/x) or an e-mail is no repository path.
    const before = text.slice(Math.max(0, (match.index ?? 0) - 3), match.index);
    if (/:\/\/$|@$/.test(before)) continue;
    const first = start ? Number(start) : undefined;
    const last = end ? Number(end) : first;
    const citation: Citation = {
      path,
      ...(first !== undefined && last !== undefined && first >= 1 && last >= first ? { lines: [first, last] as [number, number] } : {}),
      ...(symbol ? { symbol } : {}),
    };
    found.set(`${citation.path}:${citation.lines?.join('-') ?? ''}#${citation.symbol ?? ''}`, citation);
  }
  return [...found.values()];
}

/**
 * Citations an agent names explicitly (`anchors` of live_note): `path`, `path:12`, `path:12-40`,
 * `path#symbol`, separated by commas or new lines. A malformed one is refused by name.
 */
export function parseCitations(list: string): { citations: Citation[]; refused: string[] } {
  const citations: Citation[] = [];
  const refused: string[] = [];
  for (const raw of list
    .split(/[,\n]/)
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([^:#\s]+)(?::(\d{1,7})(?:-(\d{1,7}))?)?(?:#([A-Za-z_$][\w$.]{0,80}))?$/.exec(raw);
    const path = match?.[1]?.replace(/^\.\//, '');
    if (!match || !path || !isRepositoryPath(path)) {
      refused.push(raw);
      continue;
    }
    const first = match[2] ? Number(match[2]) : undefined;
    const last = match[3] ? Number(match[3]) : first;
    if (first !== undefined && (first < 1 || (last ?? first) < first)) {
      refused.push(raw);
      continue;
    }
    citations.push({ path, ...(first !== undefined ? { lines: [first, last ?? first] as [number, number] } : {}), ...(match[4] ? { symbol: match[4] } : {}) });
  }
  return { citations, refused };
}
