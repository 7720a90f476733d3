import { h } from '../dom.js';

/**
 * What the retention check of a consolidation or compaction found (core/retention), as the history
 * page shows it: beside each note, whether the bank kept its facts and which it did not; for a
 * compaction, each section whose digest dropped some.
 */
export interface RetentionEntry {
  note?: string;
  filename?: string;
  path?: string[];
  status: string;
  items: number;
  missing?: Array<{ kind: string; text: string }>;
  missing_count?: number;
  to_meet_budget?: boolean;
}

const WORDS: Record<string, string> = { retained: 'retained', partly_retained: 'partly retained', not_retained: 'not retained', let_go: 'let go' };

/** "partly retained: missing the number 8443, the path /etc/app.conf": the verdict, each missing item a code span. */
export function retentionBadge(entry: RetentionEntry | undefined): HTMLElement | null {
  if (!entry) return null;
  const status = /^[a-z_]+$/.test(entry.status) ? entry.status : 'other';
  const label = WORDS[entry.status] ?? entry.status;
  const missing = entry.missing ?? [];
  const more = (entry.missing_count ?? missing.length) - missing.length;
  const title = entry.status === 'retained' ? `all ${entry.items} item(s) found in the bank` : `${entry.items} item(s) looked for`;
  return h(
    'span',
    { class: `retention retention-${status}`, title },
    label,
    missing.length > 0 ? ': missing ' : '',
    ...missing.flatMap((item, i) => [i > 0 ? ', ' : '', `the ${item.kind} `, h('code', {}, item.text)]),
    more > 0 ? ` and ${more} more` : '',
    entry.to_meet_budget ? ' (let go to meet the budget; kept in the pre-image)' : '',
  );
}

/** A compaction's sections whose digest did not keep every item of the section. */
export function sectionsRetention(entries: RetentionEntry[]): HTMLElement | null {
  const lost = entries.filter((entry) => entry.status !== 'retained' && entry.filename !== undefined);
  if (lost.length === 0) return null;
  return h(
    'ul',
    { class: 'retention-sections' },
    ...lost.map((entry) => h('li', {}, h('span', { class: 'file' }, `${entry.filename}#${(entry.path ?? []).join(' › ')}`), ' ', retentionBadge(entry))),
  );
}
