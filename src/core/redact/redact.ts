import { invalid } from '../../shared/errors.js';
import { ASSIGNMENT_HINTS, assignments, mayHoldAssignment } from './assignments.js';
import { BLOCK_HINTS, privateKeyBlocks, puttyPrivateLines } from './blocks.js';
import { SECRET_PATTERNS } from './patterns.js';
import type { Finding, SecretPattern } from './secret-pattern.js';

/**
 * Secrets never stored: the one place that finds them, for notes at write time, imports, and the
 * model's consolidation plans and compaction digests before they are committed. Every scan is
 * linear in the text (see secret-pattern.ts), and a text holding none of the patterns' literals is
 * passed after one scan for all of them (case-insensitive: no lowercase copy is made).
 *
 * `LIVE_MEM_REDACT`: `mask` (default) replaces each secret with `[redacted: kind]`, keeping what
 * surrounds it (`password=[redacted: password]`); `refuse` refuses the whole write, naming the
 * kinds found; `off` stores text as given. `<private>…</private>` is honoured in every mode: it is
 * the writer's explicit request.
 */
export type RedactMode = 'mask' | 'refuse' | 'off';
export const REDACT_MODES: readonly RedactMode[] = ['mask', 'refuse', 'off'];

/** How many secrets of one kind were found: what answers report, never the secret itself. */
export interface KindCount {
  kind: string;
  count: number;
}

export const marker = (kind: string): string => `[redacted: ${kind}]`;

const PRIVATE_TAG = /<(\/?)private>/gi;
const PRIVATE_CLOSE = /private>/i;

/**
 * Removes every `<private>…</private>` span (tags case-insensitive, spans over lines, nested tags
 * counted); an unclosed `<private>` removes everything after it, a stray `</private>` is dropped.
 * `removed` counts the spans.
 */
export function stripPrivate(text: string): { text: string; removed: number } {
  if (!PRIVATE_CLOSE.test(text)) return { text, removed: 0 };
  const kept: string[] = [];
  let removed = 0;
  let depth = 0;
  let from = 0; // start of the text kept since the last tag, at depth 0
  for (const tag of text.matchAll(PRIVATE_TAG)) {
    const closing = tag[1] === '/';
    if (depth === 0) {
      kept.push(text.slice(from, tag.index));
      if (closing) from = tag.index + tag[0].length;
      else {
        depth = 1;
        removed++;
      }
      continue;
    }
    depth += closing ? -1 : 1;
    if (depth === 0) from = tag.index + tag[0].length;
  }
  if (depth === 0) kept.push(text.slice(from));
  return { text: kept.join(''), removed };
}

/** Assignments name their findings below every pattern: a provider's kind is the better name. */
const ASSIGNMENTS_RANK = SECRET_PATTERNS.length;

/**
 * Every hint of every pattern, block and assignment, as one expression shaped as a trie (one
 * branch per first letter, so each place in the text costs one test of its letter whatever the
 * number of hints). Most texts hold none: one scan then answers. Case-insensitive rather than run
 * over a lowercased copy: no row can match where only a lowercase copy holds its hint, since
 * lowercasing maps no character but A–Z onto a–z that matters here (the Kelvin sign's `k` or a
 * dotted `İ`'s `i` are no letters of any row's, whose letters are ASCII, matched without the `u` flag).
 */
const ALL_HINTS = [...new Set([...SECRET_PATTERNS.flatMap((pattern) => pattern.hints), ...ASSIGNMENT_HINTS, ...Object.values(BLOCK_HINTS)])];
const HINT_SCAN = new RegExp(trieSource(ALL_HINTS), 'gi');
/**
 * What each hint selects: the rows it is a literal of (by rank), and whether it opens the key scan
 * or a block scan. The hint found at a place stands for every hint it begins with (`sk-ant-` holds
 * `sk-`, `tokens:` holds `token`): the trie takes the longest, so its entry merges theirs.
 */
interface HintScans {
  ranks: readonly number[];
  assignment: boolean;
  pem: boolean;
  putty: boolean;
}
const BY_HINT = new Map<string, HintScans>();
for (const hint of ALL_HINTS) {
  const prefixes = ALL_HINTS.filter((other) => hint.startsWith(other));
  const ranks: number[] = [];
  for (const [rank, pattern] of SECRET_PATTERNS.entries()) if (pattern.hints.some((own) => prefixes.includes(own))) ranks.push(rank);
  BY_HINT.set(hint, {
    ranks,
    assignment: ASSIGNMENT_HINTS.some((own) => prefixes.includes(own)),
    pem: prefixes.includes(BLOCK_HINTS.pem),
    putty: prefixes.includes(BLOCK_HINTS.putty),
  });
}

interface TrieNode {
  end: boolean;
  next: Map<string, TrieNode>;
}

/** `words` as a regex source that matches the longest of them starting at a place. */
function trieSource(words: readonly string[]): string {
  const root: TrieNode = { end: false, next: new Map() };
  for (const word of words) {
    let node = root;
    for (const char of word) {
      const child = node.next.get(char) ?? { end: false, next: new Map() };
      node.next.set(char, child);
      node = child;
    }
    node.end = true;
  }
  const source = (node: TrieNode): string => {
    const branches = [...node.next].map(([char, child]) => char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&') + source(child));
    if (branches.length === 0) return '';
    const body = branches.length === 1 ? (branches[0] as string) : `(?:${branches.join('|')})`;
    return node.end ? `(?:${body})?` : body;
  };
  return source(root);
}

/** The scans a text's hints select (see scansFor). */
export interface SelectedScans {
  /** The rows to run, by rank (ascending): those one of whose hints the text holds. */
  ranks: number[];
  /** The key scan (assignments.ts): the text holds one of ASSIGNMENT_HINTS. */
  assignment: boolean;
  pem: boolean;
  putty: boolean;
}

/**
 * The scans `text` needs, keyed by the literals it holds (as gitleaks' `keywords`): a row runs only
 * where one of its hints is, so "the token refresh path" runs Airtable's row (`pat`) and the gate of
 * the key scan, not the catalogue. Null when the text holds no hint (the common case: nothing more
 * is done). One scan of the text; after each find it goes on one character later, not past it: a
 * hint that starts inside another is found too.
 */
export function scansFor(text: string): SelectedScans | null {
  HINT_SCAN.lastIndex = 0;
  let match = HINT_SCAN.exec(text);
  if (!match) return null;
  const selected: SelectedScans = { ranks: [], assignment: false, pem: false, putty: false };
  let unsorted = false;
  for (; match; match = HINT_SCAN.exec(text)) {
    // Hints are lowercase, as most texts write them: a copy is made only for one written otherwise.
    const scans = (BY_HINT.get(match[0]) ?? BY_HINT.get(match[0].toLowerCase())) as HintScans;
    for (const rank of scans.ranks) {
      if (selected.ranks.includes(rank)) continue;
      unsorted ||= selected.ranks.length > 0 && rank < (selected.ranks[selected.ranks.length - 1] as number);
      selected.ranks.push(rank);
    }
    if (scans.assignment) selected.assignment = true;
    if (scans.pem) selected.pem = true;
    if (scans.putty) selected.putty = true;
    HINT_SCAN.lastIndex = match.index + 1;
  }
  if (unsorted) selected.ranks.sort((x, y) => x - y);
  return selected;
}

/**
 * Whether the write pass leaves `text` as it is in every mode: no hint of any secret and no
 * `<private>` tag (one scan each, nothing allocated). Most texts are such; the others go through
 * redactForWrite.
 */
export function holdsNothingToRedact(text: string): boolean {
  HINT_SCAN.lastIndex = 0;
  return !HINT_SCAN.test(text) && !PRIVATE_CLOSE.test(text);
}

const NONE: readonly Finding[] = Object.freeze([]);

/**
 * Every secret in `text`, in order, overlapping findings merged (named by the higher-ranked kind).
 * A text whose selected rows find nothing allocates no list (NONE): most texts holding a hint hold
 * no secret.
 */
function findSecrets(text: string): readonly Finding[] {
  const selected = scansFor(text);
  if (!selected) return NONE;
  let found: Finding[] | undefined;
  if (selected.pem) privateKeyBlocks(text, (found ??= []));
  if (selected.putty) puttyPrivateLines(text, (found ??= []));
  for (const rank of selected.ranks) {
    const pattern = SECRET_PATTERNS[rank] as SecretPattern;
    // The row's own global regex, from the start (matchAll would build a copy of it per call).
    const regex = pattern.regex;
    regex.lastIndex = 0;
    for (let match = regex.exec(text); match; match = regex.exec(text)) {
      // Every pattern has the `d` flag: indices are there.
      const indices = match.indices as RegExpIndicesArray;
      const [start, end] = indices.groups?.s ?? (indices[0] as [number, number]);
      if (pattern.valid && !pattern.valid(text.slice(start, end))) continue;
      (found ??= []).push({ start, end, kind: pattern.kind, rank });
    }
  }
  if (selected.assignment && mayHoldAssignment(text)) assignments(text, (found ??= []), ASSIGNMENTS_RANK);
  if (!found || found.length === 0) return NONE;
  found.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const merged: Finding[] = [];
  for (const finding of found) {
    const last = merged[merged.length - 1];
    if (last && finding.start < last.end) {
      last.end = Math.max(last.end, finding.end);
      if (finding.rank < last.rank) Object.assign(last, { kind: finding.kind, rank: finding.rank });
    } else merged.push({ ...finding });
  }
  return merged;
}

/**
 * Whether redactForWrite(text, mode) gives back `text` itself with nothing to report: no
 * `<private>` tag, and (unless mode is `off`) no secret the selected scans find. What the input
 * pass (stored-text.ts) asks of every string, in one scan for the hints and only the rows they
 * select, with nothing allocated past the selection when nothing is found.
 */
export function leavesAsIs(text: string, mode: RedactMode): boolean {
  if (PRIVATE_CLOSE.test(text)) return false;
  return mode === 'off' || findSecrets(text).length === 0;
}

function countKinds(findings: readonly Finding[]): KindCount[] {
  const counts = new Map<string, number>();
  for (const { kind } of findings) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => ({ kind, count }));
}

/** "github-token ×1, password ×2": kinds for a message, never the secrets. */
export function describeKinds(kinds: readonly KindCount[]): string {
  return kinds.map(({ kind, count }) => `${kind} ×${count}`).join(', ');
}

/** The kinds of secrets `text` holds (empty: none). */
export function secretKinds(text: string): KindCount[] {
  return countKinds(findSecrets(text));
}

/** `text` with every secret replaced by `[redacted: kind]`, and what was replaced. */
export function maskSecrets(text: string): { text: string; redacted: KindCount[] } {
  const findings = findSecrets(text);
  if (findings.length === 0) return { text, redacted: [] };
  const parts: string[] = [];
  let at = 0;
  for (const finding of findings) {
    parts.push(text.slice(at, finding.start), marker(finding.kind));
    at = finding.end;
  }
  parts.push(text.slice(at));
  return { text: parts.join(''), redacted: countKinds(findings) };
}

export interface Redacted {
  text: string;
  /** Secrets masked, by kind (empty when none, or with mode off). */
  redacted: KindCount[];
  /** `<private>` spans removed. */
  private_removed: number;
}

/**
 * What a writer's text becomes before it is stored: `<private>` spans removed, then secrets masked
 * (`mask`), refused with `invalid_input` naming their kinds (`refuse`: `what` says what is
 * refused, e.g. "the note"), or left (`off`). `honourPrivate: false` leaves `<private>` tags as
 * they are (text the model wrote, where a tag is no writer's request); `refusalHint` ends a refusal.
 */
export function redactForWrite(text: string, mode: RedactMode, what: string, options: { honourPrivate?: boolean; refusalHint?: string } = {}): Redacted {
  const honourPrivate = options.honourPrivate ?? true;
  const { text: kept, removed } = honourPrivate ? stripPrivate(text) : { text, removed: 0 };
  if (mode === 'off') return { text: kept, redacted: [], private_removed: removed };
  if (mode === 'refuse') {
    const kinds = secretKinds(kept);
    if (kinds.length > 0) {
      throw invalid(
        `${what} holds what looks like secrets (${describeKinds(kinds)}): nothing was stored (LIVE_MEM_REDACT=refuse). ` +
          (options.refusalHint ?? 'Leave them out, or put them between <private> and </private>'),
        { redacted: kinds },
      );
    }
    return { text: kept, redacted: [], private_removed: removed };
  }
  const masked = maskSecrets(kept);
  return { text: masked.text, redacted: masked.redacted, private_removed: removed };
}

/**
 * Secrets `after` holds that `before` did not (compared by the secret's own text): what a model's
 * plan or digest would add to the bank. One already there (written by an older version, or with
 * LIVE_MEM_REDACT=off) does not block every later plan that keeps the text around it.
 */
export function newSecretKinds(before: string, after: string): KindCount[] {
  return countKinds(findSecrets(after).filter((finding) => !before.includes(after.slice(finding.start, finding.end))));
}

/**
 * Refuses (`invalid_input`) a model's output that would add a secret to a text (see
 * newSecretKinds): what it says names the place and the kinds, never the secret, so it can go back
 * to the model in a refusal.
 */
export function refuseNewSecrets(texts: Iterable<{ where: string; before: string; after: string }>, subject: string): void {
  for (const { where, before, after } of texts) {
    const kinds = newSecretKinds(before, after);
    if (kinds.length > 0) {
      throw invalid(
        `${subject} writes what looks like a secret into ${where} (${describeKinds(kinds)}): credentials never go into the bank; ` +
          'leave the value out, or write [redacted: <kind>] in its place',
        { redacted: kinds, where },
      );
    }
  }
}
