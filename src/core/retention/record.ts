import { invalid } from '../../shared/errors.js';
import { ITEM_KINDS, type ItemKind } from './items.js';

/**
 * What the retention check leaves in a commit record and the history's record.json (`retention`,
 * beside `provenance` and `dispositions`): per note of a consolidation (per section of a compaction),
 * how many items were looked for and which were not found. Records are input (pending.ts checks them,
 * history readers keep only what is well formed); records written before the check have none.
 */

/** LIVE_MEM_RETENTION: what a gap does to a window (or a digest). */
export type RetentionMode = 'report' | 'retry' | 'refuse';
export const DEFAULT_RETENTION: RetentionMode = 'retry';

/** `let_go`: a discarded note's items the bank does not hold, let go on purpose (the plan gave its reason). */
export type RetentionStatus = 'retained' | 'partly_retained' | 'not_retained' | 'let_go';
const RETENTION_STATUSES: readonly RetentionStatus[] = ['retained', 'partly_retained', 'not_retained', 'let_go'];
/** Each status in words, as the CLI and warnings write it (the web viewer, which imports no core module but validate.ts, has its own: ui/web/views/retention.ts). */
export const STATUS_WORDS: Readonly<Record<RetentionStatus, string>> = {
  retained: 'retained',
  partly_retained: 'partly retained',
  not_retained: 'not retained',
  let_go: 'let go',
};

export interface MissingItem {
  kind: ItemKind;
  /** As the note (the section) writes it, one line. */
  text: string;
}

/** A consolidation's entry: one per note of the window. */
export interface RetentionEntry {
  note: string;
  status: RetentionStatus;
  /** Items looked for. */
  items: number;
  /** Items not found, the first MAX_MISSING_LISTED. */
  missing?: MissingItem[];
  /** How many were not found, when more than are listed. */
  missing_count?: number;
}

/** What a reader is told of a note's retention (a memory_search hit, bank_explain): its status and, when it lost some, the items. */
export type NoteRetention = Pick<RetentionEntry, 'status' | 'items' | 'missing' | 'missing_count'>;

export const noteRetention = ({ status, items, missing, missing_count }: RetentionEntry): NoteRetention => ({
  status,
  items,
  ...(missing ? { missing } : {}),
  ...(missing_count !== undefined ? { missing_count } : {}),
});

/** A compaction's entry: one per section it digested. */
export interface SectionRetention {
  filename: string;
  path: string[];
  status: Exclude<RetentionStatus, 'let_go'>;
  items: number;
  missing?: MissingItem[];
  missing_count?: number;
  /** The file had no room left under its target for what the digest left out: let go to meet the budget (the pre-image keeps it). */
  to_meet_budget?: boolean;
}

export const MAX_MISSING_LISTED = 20;
const MAX_ITEM_TEXT = 200;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;

function isMissingList(value: unknown): value is MissingItem[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_MISSING_LISTED &&
    value.every((item) => isObject(item) && ITEM_KINDS.includes(item.kind as ItemKind) && typeof item.text === 'string' && item.text.length <= MAX_ITEM_TEXT)
  );
}

function wellFormed(entry: Record<string, unknown>, statuses: readonly string[]): boolean {
  return (
    statuses.includes(String(entry.status)) &&
    isCount(entry.items) &&
    (entry.missing === undefined || isMissingList(entry.missing)) &&
    (entry.missing_count === undefined || isCount(entry.missing_count))
  );
}

const SECTION_STATUSES = RETENTION_STATUSES.filter((status) => status !== 'let_go');

/**
 * Checks a stored record's `retention` (pending.ts): optional; a consolidation's names only its own
 * notes, at most one entry each; a compaction's only sections of files it writes. Throws `invalid_input`.
 */
export function checkRetention(
  retention: unknown,
  record: { kind: 'consolidation' | 'compaction'; notes: ReadonlySet<string>; written: ReadonlySet<string> },
): void {
  if (retention === undefined) return;
  if (!Array.isArray(retention) || retention.length > 1_000_000) throw invalid('its retention is not a list (or an endless one)');
  const seen = new Set<string>();
  for (const entry of retention) {
    if (record.kind === 'consolidation') {
      if (!isObject(entry) || typeof entry.note !== 'string' || !wellFormed(entry, RETENTION_STATUSES)) {
        throw invalid('one of its retention entries is malformed (note, status, items, missing)');
      }
      if (!record.notes.has(entry.note) || seen.has(entry.note))
        throw invalid(`its retention names ${JSON.stringify(entry.note)}, which is not one of its notes (or twice)`);
      seen.add(entry.note);
    } else {
      if (
        !isObject(entry) ||
        typeof entry.filename !== 'string' ||
        !Array.isArray(entry.path) ||
        !entry.path.every((part) => typeof part === 'string') ||
        !wellFormed(entry, SECTION_STATUSES) ||
        (entry.to_meet_budget !== undefined && typeof entry.to_meet_budget !== 'boolean')
      ) {
        throw invalid('one of its retention entries is malformed (filename, path, status, items, missing)');
      }
      if (!record.written.has(entry.filename)) throw invalid(`its retention names ${JSON.stringify(entry.filename)}, a file it does not write`);
    }
  }
}

/** A history record's `retention` as read: the well-formed entries only (a hand-edited record misleads no one); [] when it has none. */
export function readRetention(raw: unknown): Array<RetentionEntry | SectionRetention> {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (entry): entry is RetentionEntry | SectionRetention =>
      isObject(entry) &&
      (typeof entry.note === 'string'
        ? wellFormed(entry, RETENTION_STATUSES)
        : typeof entry.filename === 'string' && Array.isArray(entry.path) && wellFormed(entry, SECTION_STATUSES)),
  );
}

/** A consolidation record's retention without the entries of `gone` notes (a forget: what they said leaves with them). */
export function retentionWithout(raw: unknown, gone: ReadonlySet<string>): unknown {
  if (!Array.isArray(raw)) return raw;
  return raw.filter((entry) => !(isObject(entry) && typeof entry.note === 'string' && gone.has(entry.note)));
}

/** "the number `8443`, the path `/etc/app.conf`": what a note lost, in words. */
export function describeMissing(entry: Pick<RetentionEntry, 'missing' | 'missing_count'>): string {
  const listed = (entry.missing ?? []).map((item) => `the ${KIND_WORDS[item.kind]} ${JSON.stringify(item.text)}`);
  const more = (entry.missing_count ?? 0) - listed.length;
  return `${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

const KIND_WORDS: Record<ItemKind, string> = {
  number: 'number',
  date: 'date',
  time: 'time',
  version: 'version',
  url: 'URL',
  path: 'path',
  flag: 'flag',
  hash: 'hash',
  identifier: 'identifier',
  name: 'name',
  word: 'word',
};

/** A run's or a window's entries counted by status. */
export function countStatuses(entries: ReadonlyArray<{ status: RetentionStatus }>): Record<RetentionStatus, number> {
  const counts: Record<RetentionStatus, number> = { retained: 0, partly_retained: 0, not_retained: 0, let_go: 0 };
  for (const entry of entries) counts[entry.status]++;
  return counts;
}
