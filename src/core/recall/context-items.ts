import type { Checkout } from '../../shared/checkout.js';
import { codeLabel } from '../anchors/note-anchors.js';
import type { WorkingSet } from '../bank/bank-service.js';
import type { SummaryRecord } from '../derived/summary-record.js';
import { bankSections } from '../markdown/sections.js';
import type { Level0Text } from '../note/corpus.js';
import { escapeShown, oneLine } from '../prompt-fence.js';
import { clipNote } from './neighbours.js';
import type { RecallHit } from './recall-service.js';

/**
 * The items a memory context is made of, each a line (or a bank section) as shown: escaped, on one line, with
 * the labels that say when, who and what its code says in the reader's checkout (memory-context.ts fills them
 * into its sections within the budget).
 */
export interface Item {
  /** Deduplication key: a note's filename, a summary id, a bank ref. */
  key: string;
  text: string;
  /** Lines shown with it when they fit (a hit's neighbour notes), each deduplicated like an item. */
  extras?: Item[];
  /** What it is part of (a bank file): named on a line of its own before the first item shown of it. */
  group?: string;
}

/** A field of stored text in quotes, on one line: an agent called `Human` reads as a name, not as a speaker. */
export const quoted = (text: string): string => JSON.stringify(oneLine(text));

/**
 * An item's line as shown: every stored field is on one line already (no text of a note starts a
 * line of its own), and the line is escaped (prompt-fence.ts): no fence, no tag.
 */
export const shown = (line: string): string => escapeShown(line);

/*
 * What each line says about its item is short: in a model's tokens an ISO timestamp costs a dozen and a
 * note's filename eighteen, and written in full beside every hit and neighbour they took 45% of a
 * context (o200k_base, on LoCoMo's turns). Times are given to the minute, a neighbour's as its time of
 * day when it is the hit's day, and a note hit by its filename alone (its time, agent and category are
 * in it, and it is the ref other tools take).
 */

/** "2023-05-08T13:56:16Z" → "2023-05-08 13:56"; anything else as it is. */
export const toMinute = (iso: string): string => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso);

export function renderSummary(doc: SummaryRecord): string {
  const findings = doc.key_findings.length > 0 ? `\n  Key findings: ${doc.key_findings.map(oneLine).join('; ')}` : '';
  const files = doc.files_mentioned.length > 0 ? `\n  Files: ${doc.files_mentioned.map(oneLine).join(', ')}` : '';
  const label = oneLine(`L${doc.level} ${toMinute(doc.range_start)} → ${toMinute(doc.range_end)}, ${doc.id}`);
  return shown(`- [${label}] ${oneLine(doc.summary)}${findings}${files}\n`);
}

/** Under its hit: which side, when (the time of day on the hit's day), who, and the text (whole unless long). */
export function renderNeighbour(side: 'before' | 'after', note: Level0Text, hitTime: string | undefined, code: string | undefined): Item {
  const minute = toMinute(note.timestamp);
  const when = hitTime !== undefined && note.timestamp.slice(0, 10) === hitTime.slice(0, 10) ? minute.slice(11) : minute;
  const label = code ? ` (${oneLine(code)})` : '';
  return { key: note.filename, text: shown(`  - ${side} ${oneLine(when)} ${quoted(note.agent)}${label}: ${oneLine(clipNote(note.content).text)}\n`) };
}

/**
 * Where the work stands, as items: each working file's sections, then the synthesis's, each under
 * the name of what it is part of. An append-only file keeps its title first and then gives its
 * newest entries first: its latest are what a session needs when not all fit. The texts are
 * escaped like every stored text shown (prompt-fence.ts).
 */
export function bankItems(working: WorkingSet, labels: ReadonlyMap<string, { text: string }>): Item[] {
  const fileItems = (filename: string, content: string, appendOnly: boolean): Item[] => {
    const [first, ...rest] = bankSections(filename, content);
    const sections = first ? [first, ...(appendOnly ? rest.reverse() : rest)] : [];
    const group = appendOnly && rest.length > 1 ? `${filename}, newest entries first` : filename;
    return sections.map((section) => {
      // A section's code label (its notes' anchors in the reader's checkout) follows it.
      const code = labels.get(`${filename}\u0000${section.path.join(' > ').toLowerCase()}`);
      return { key: `bank ${filename}#${section.start}`, text: shown(`${section.text}\n${code ? `[${oneLine(code.text)}]\n` : ''}`), group };
    });
  };
  return [
    ...working.files.flatMap((file) => fileItems(file.filename, file.content, file.appendOnly)),
    ...(working.synthesis.trim() ? fileItems('synthesis', working.synthesis, false) : []),
  ];
}

/** A recent note as an item: when, who, what kind, what its code says in the reader's checkout. */
export async function recentItem(note: Level0Text, checkout: Checkout | undefined): Promise<Item> {
  const code = await codeLabel(checkout, note.anchors);
  const consolidated = note.source === 'history' ? ', consolidated' : '';
  const label = `${oneLine(toMinute(note.timestamp))} ${quoted(note.agent)} ${oneLine(note.category)}${consolidated}${code ? `; ${oneLine(code.text)}` : ''}`;
  return { key: note.filename, text: shown(`- [${label}] ${oneLine(note.content)}\n`) };
}

/** A hit's label: a note by its filename, other sources by their ref with what dates them. */
export function hitLabel(hit: RecallHit): string {
  if (hit.source === 'live' || hit.source === 'history') return `${hit.source} ${hit.ref}`;
  const when = hit.range_end ?? (hit.superseded_at ? `superseded ${toMinute(hit.superseded_at)}` : undefined);
  return `${hit.source}${hit.level === null ? '' : ` L${hit.level}`}${when ? ` ${toMinute(when)}` : ''} ${hit.ref}`;
}
