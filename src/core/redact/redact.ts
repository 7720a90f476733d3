import { invalid } from '../../shared/errors.js';
import { ASSIGNMENT_HINTS, SECRET_PATTERNS, assignmentKind, isPlaceholder } from './patterns.js';

/**
 * Secrets never stored: the one place that finds them, for notes at write time, imports, and the
 * model's consolidation plans and compaction digests before they are committed. Every scan is
 * linear in the text (see patterns.ts), and a text holding none of the patterns' literals is
 * passed after one lowercase copy and a few substring checks.
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

interface Finding {
  start: number;
  end: number;
  kind: string;
  /** Lower names the text where two findings overlap. */
  rank: number;
}

export const marker = (kind: string): string => `[redacted: ${kind}]`;

const PRIVATE_TAG = /<(\/?)private>/gi;

/**
 * Removes every `<private>…</private>` span (tags case-insensitive, spans over lines, nested tags
 * counted); an unclosed `<private>` removes everything after it, a stray `</private>` is dropped.
 * `removed` counts the spans.
 */
export function stripPrivate(text: string): { text: string; removed: number } {
  if (!text.toLowerCase().includes('private>')) return { text, removed: 0 };
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

const KEY_BEGIN = /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const KEY_END = /-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const BLANK_LINE = /\n[ \t\r]*\n/g;

/**
 * `-----BEGIN … PRIVATE KEY-----` to its END line (in PEM, or in JSON with `\n` escapes as in a GCP
 * service-account key); without an END, to the next blank line or the end. Begins, ends and blank
 * lines are each found once, then paired in one pass.
 */
function privateKeyBlocks(text: string, found: Finding[]): void {
  if (!text.includes('PRIVATE KEY')) return;
  const ends = [...text.matchAll(KEY_END)];
  const blanks = [...text.matchAll(BLANK_LINE)];
  let e = 0;
  let b = 0;
  let covered = 0;
  for (const begin of text.matchAll(KEY_BEGIN)) {
    if (begin.index < covered) continue;
    const after = begin.index + begin[0].length;
    while (e < ends.length && (ends[e] as RegExpExecArray).index < after) e++;
    while (b < blanks.length && (blanks[b] as RegExpExecArray).index < after) b++;
    const end = ends[e];
    const blank = blanks[b];
    covered = end ? end.index + end[0].length : blank ? blank.index : text.length;
    found.push({ start: begin.index, end: covered, kind: 'private-key', rank: -1 });
  }
}

/** `key = value`, `key: value`, `"key": "value"`, `key := value`, `'key' => 'value'`: the key part. */
const ASSIGNMENT_KEY = /(?<![A-Za-z0-9_.])(["']?)([A-Za-z][A-Za-z0-9_.-]{0,63})\1([ \t]{0,8})(:=|=>|=|:)(?!=)/g;
/** The value right after an assignment's operator: quoted, or a bare word. */
const ASSIGNMENT_VALUE = /([ \t]{0,8})(?:"([^"\n]{1,4096})"|'([^'\n]{1,4096})'|([^\s"'`,;)}\]]{3,256}))/y;
/** What may follow a bare value that ends its line: a comma or semicolon, a comment. */
const LINE_END = /[ \t]*[,;]?[ \t]*(?:(?:#|\/\/)[^\n]*)?(?:\r?\n|$)/y;
/** `max_token: 512`: a number in a config is a size or a count far more often than a secret. */
const COUNT = /^\d{1,9}$/;
const PWD_KEY = /(?:^|[_.-])pwd$/i;
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

/**
 * Values assigned to keys naming a secret (`DB_PASSWORD=…`, `client_secret: …`, `"apiKey": "…"`).
 * A quoted value, or a bare one after a tight `=` (.env, shell, query strings), is masked; a bare
 * value after `:` or a spaced `=` only when it ends its line (YAML, config): "password: reset it
 * monthly" is prose and is left alone. References, placeholders and counts (`${X}`, `<token>`,
 * `process.env.X`, `a.b.c`, `512`) are no secrets.
 */
function assignments(text: string, found: Finding[]): void {
  for (const match of text.matchAll(ASSIGNMENT_KEY)) {
    const kind = assignmentKind(match[2] as string);
    if (!kind) continue;
    ASSIGNMENT_VALUE.lastIndex = match.index + match[0].length;
    const value = ASSIGNMENT_VALUE.exec(text);
    if (!value) continue;
    const bare = value[4] !== undefined;
    const tight = match[4] === '=' && match[3] === '' && value[1] === '';
    // In a query string (`?token=x&page=2`) a tight value ends at `&`; elsewhere `&` is a password's.
    const secret = bare && tight ? (value[4] as string).split('&')[0] : ((value[2] ?? value[3] ?? value[4]) as string);
    if (!secret || isPlaceholder(secret.trim())) continue;
    // `PWD=` is ODBC's password, but also the shell's working directory (`PWD=/home/bob`, `pwd: /srv`).
    if (PWD_KEY.test(match[2] as string) && (match[4] !== '=' || /^(?:[/~]|[A-Za-z]:\\)/.test(secret))) continue;
    if (bare && !tight) {
      LINE_END.lastIndex = ASSIGNMENT_VALUE.lastIndex;
      if (!LINE_END.test(text) || CODE_REFERENCE.test(secret) || COUNT.test(secret)) continue;
    }
    const start = match.index + match[0].length + (value[1] as string).length + (bare ? 0 : 1);
    found.push({ start, end: start + secret.length, kind, rank: SECRET_PATTERNS.length });
  }
}

/**
 * Any hint of any pattern or assignment, in one expression: most texts hold none, and one scan for
 * all of them costs a fifth of looking for each (every field of every note is looked through).
 */
const ANY_HINT = new RegExp(
  [...new Set([...SECRET_PATTERNS.flatMap((pattern) => pattern.hints), ...ASSIGNMENT_HINTS])]
    .map((hint) => hint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
);

/** Every secret in `text`, in order, overlapping findings merged (named by the higher-ranked kind). */
function findSecrets(text: string): Finding[] {
  const lower = text.toLowerCase();
  // Without a hint, no pattern is looked for and no assignment read: only a private key block can be there.
  if (!ANY_HINT.test(lower) && !text.includes('PRIVATE KEY')) return [];
  const found: Finding[] = [];
  privateKeyBlocks(text, found);
  for (const [rank, pattern] of SECRET_PATTERNS.entries()) {
    if (!pattern.hints.some((hint) => lower.includes(hint))) continue;
    for (const match of text.matchAll(pattern.regex)) {
      // Every pattern has the `d` flag: indices are there.
      const indices = match.indices as RegExpIndicesArray;
      const [start, end] = indices.groups?.s ?? (indices[0] as [number, number]);
      if (pattern.valid && !pattern.valid(text.slice(start, end))) continue;
      found.push({ start, end, kind: pattern.kind, rank });
    }
  }
  if (ASSIGNMENT_HINTS.some((hint) => lower.includes(hint))) assignments(text, found);
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
