import { createHash } from 'node:crypto';

/**
 * A stored summary, one JSON object per summary at `{space}/_summaries/L{level}/{id}.json`. It is
 * derived data: it says what it was built from (`covers`, `hash`), any run can rebuild it, and one
 * that does not parse is skipped and rebuilt, never trusted.
 */
export interface SummaryRecord {
  format: 'live-mem-summary';
  format_version: 1;
  id: string;
  level: number;
  /** A sealed summary never changes; an open one (the newest window or group) is rewritten as it grows. */
  sealed: boolean;
  /** L1: note filenames, or `filename#i/n` for the i-th slice of a note cut in n; Lk≥2: child summary ids. Time order. */
  covers: string[];
  range_start: string;
  range_end: string;
  /** sha256 hex of the exact inputs (covered texts or child hashes) and of what shapes the summary. */
  hash: string;
  /** When this version was written. */
  created_at: string;
  summary: string;
  key_findings: string[];
  topics: string[];
  agents: string[];
  files_mentioned: string[];
  /** Characters summarised: the notes' text (L1) or the children's summaries (Lk). */
  chars_in: number;
  model: string;
}

export const SUMMARY_FORMAT = 'live-mem-summary';
export const SUMMARY_FORMAT_VERSION = 1;
export const MAX_LEVEL = 6;
/**
 * Changes whenever the prompt or the record's meaning changes: it is part of every hash, so a new
 * version regenerates open summaries as they change, and everything on `strategy: full`.
 */
export const PROMPT_VERSION = 1;

/** `L{level}-{YYYYMMDDTHHMMSS}-{note id}[-p{i}][-r{n}]`; key-safe, at most 200 characters. */
export const SUMMARY_ID = /^L([1-6])-(\d{8}T\d{6})-([A-Za-z0-9][A-Za-z0-9-]{0,160})$/;

export const levelOfId = (id: string): number | null => {
  const match = SUMMARY_ID.exec(id);
  return match ? Number(match[1]) : null;
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The hash of one level-0 unit: everything about it the prompt shows. */
export const unitHash = (parts: { ref: string; timestamp: string; agent: string; category: string; tags: string[]; text: string }): string =>
  sha256(JSON.stringify([parts.ref, parts.timestamp, parts.agent, parts.category, parts.tags, parts.text]));

/** The hash of a summary from its members: unit refs and hashes (L1) or child ids and hashes (Lk). */
export const summaryHash = (level: number, members: ReadonlyArray<{ ref: string; hash: string }>): string =>
  sha256(JSON.stringify([SUMMARY_FORMAT, PROMPT_VERSION, level, members.map((m) => [m.ref, m.hash])]));

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const isIso = (value: unknown): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/**
 * A stored summary, or null when it is not one this version can trust (bad JSON, a missing or
 * ill-typed field, an id or level that does not match where it is stored).
 */
export function parseRecord(body: Buffer, expected: { level: number; id: string }): SummaryRecord | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!raw || typeof raw !== 'object') return null;
  const ok =
    raw.format === SUMMARY_FORMAT &&
    raw.format_version === SUMMARY_FORMAT_VERSION &&
    raw.id === expected.id &&
    raw.level === expected.level &&
    typeof raw.sealed === 'boolean' &&
    isStrings(raw.covers) &&
    raw.covers.length > 0 &&
    isIso(raw.range_start) &&
    isIso(raw.range_end) &&
    typeof raw.hash === 'string' &&
    /^[0-9a-f]{64}$/.test(raw.hash) &&
    isIso(raw.created_at) &&
    typeof raw.summary === 'string' &&
    raw.summary.trim() !== '' &&
    isStrings(raw.key_findings) &&
    isStrings(raw.topics) &&
    isStrings(raw.agents) &&
    isStrings(raw.files_mentioned) &&
    typeof raw.chars_in === 'number' &&
    typeof raw.model === 'string';
  return ok ? (raw as unknown as SummaryRecord) : null;
}

export const serializeRecord = (record: SummaryRecord): string => `${JSON.stringify(record, null, 2)}\n`;

/** A note's ref split: `file.md` → whole; `file.md#2/3` → slice 2 of 3. */
export function parseRef(ref: string): { filename: string; slice?: { i: number; n: number } } {
  const match = /^(.+)#(\d+)\/(\d+)$/.exec(ref);
  return match ? { filename: match[1] as string, slice: { i: Number(match[2]), n: Number(match[3]) } } : { filename: ref };
}

/**
 * The summaries whose text may hold one of `filenames` (a forget): each level-1 summary covering one,
 * whole or a slice, and each summary above one of those, level by level. One whose covers are unknown
 * (`null`: unreadable or gone) counts as covering: it is derived data, rebuilt by the next run.
 */
export function coveringSummaries(
  summaries: ReadonlyArray<{ level: number; id: string; covers: readonly string[] | null }>,
  filenames: ReadonlySet<string>,
): Array<{ level: number; id: string }> {
  const found: Array<{ level: number; id: string }> = [];
  let below = new Set<string>();
  for (let level = 1; level <= MAX_LEVEL; level++) {
    const hit = new Set<string>();
    for (const summary of summaries) {
      if (summary.level !== level) continue;
      const covers =
        summary.covers === null ||
        (level === 1 ? summary.covers.some((ref) => filenames.has(parseRef(ref).filename)) : summary.covers.some((child) => below.has(child)));
      if (covers) hit.add(summary.id);
    }
    for (const id of [...hit].sort()) found.push({ level, id });
    below = hit;
  }
  return found;
}
