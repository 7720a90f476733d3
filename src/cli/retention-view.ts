/**
 * How the CLI shows what the retention check found (core/retention): a run's counts and each note not
 * wholly retained, a note's verdict beside its disposition, a search hit's. Plain text from the JSON
 * a command returns (the same the MCP tools return).
 */
import { type RetentionStatus, STATUS_WORDS } from '../core/retention/record.js';

type Result = Record<string, unknown>;

/** "the number "8443", the path "/etc/app.conf" and 3 more". */
function missingText(entry: Result): string {
  const missing = Array.isArray(entry.missing) ? (entry.missing as Result[]) : [];
  const listed = missing.map((item) => `the ${String(item.kind)} ${JSON.stringify(String(item.text))}`);
  const more = (typeof entry.missing_count === 'number' ? entry.missing_count : listed.length) - listed.length;
  return `${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** A note's (a section's) verdict in a few words: "partly retained, missing the number "8443"". */
export function retentionVerdict(entry: Result): string {
  const status = STATUS_WORDS[entry.status as RetentionStatus] ?? String(entry.status);
  if (entry.status === 'retained') return status;
  const what = missingText(entry);
  const budget = entry.to_meet_budget === true ? ' (let go to meet the budget; the pre-image keeps it)' : '';
  return `${status}${what ? `, missing ${what}` : ''}${budget}`;
}

/** A consolidation's `retention` summary: its counts, then each note not wholly retained. */
export function retentionBlock(summary: unknown): string[] {
  if (typeof summary !== 'object' || summary === null) return [];
  const s = summary as Result;
  const counts = Object.entries(STATUS_WORDS).map(([key, words]) => `${String(s[key] ?? 0)} ${words}`);
  const notes = Array.isArray(s.notes) ? (s.notes as Result[]) : [];
  return [
    `retention (${String(s.mode)}): ${String(s.checked ?? 0)} note(s) checked: ${counts.join(', ')}`,
    ...notes.map((entry) => `  ${String(entry.note)}: ${retentionVerdict(entry)}`),
  ];
}

/** A compaction's sections whose digests did not keep every item. */
export function compactionRetention(files: unknown): string[] {
  if (!Array.isArray(files)) return [];
  return (files as Result[]).flatMap((file) =>
    Array.isArray(file.retention)
      ? (file.retention as Result[]).map(
          (section) => `  ${String(file.filename)}#${((section.path as string[]) ?? []).join(' > ')}: ${retentionVerdict(section)}`,
        )
      : [],
  );
}
