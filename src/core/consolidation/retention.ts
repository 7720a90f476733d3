import type { ChatMessage } from '../../llm/types.js';
import { fenceReason } from '../prompt-fence.js';
import { checkWindow, type WindowNoteText, type WindowRetention } from '../retention/check.js';
import { countStatuses, describeMissing, type RetentionEntry, type RetentionMode, STATUS_WORDS } from '../retention/record.js';
import type { AppliedPlan, BankSnapshot } from '../commit/apply-plan.js';
import { sectionAt } from '../markdown/edit.js';
import { type Outline, outlineOf } from '../markdown/outline.js';
import type { NoteRef, Plan } from './plan.js';
import { resolveRef, type Accounting } from './provenance.js';
import type { Analyzer } from '../../search/analyze.js';

/**
 * A consolidation window as the retention check (core/retention) sees it: the notes as the model saw
 * them, what the plan says became of each (its accounting), the bank and synthesis it read (the
 * space's statistics) and the ones it leaves, and the text the plan cites each note for: what each
 * change citing it writes (a file's whole content, an edit's), else the section a disposition names
 * (`into` without a citation), found in the new bank with the section model edits use. `analyzer`:
 * one kept by the caller, so a run's windows share its stems.
 */
export function windowRetention(
  window: { notes: readonly WindowNoteText[]; synthesis: string },
  bank: BankSnapshot,
  applied: Pick<AppliedPlan, 'writes'>,
  plan: Pick<Plan, 'changes'>,
  accounting: Pick<Accounting, 'dispositions'>,
  /** The synthesis the window leaves (the plan's, or its compression). */
  synthesis: string,
  analyzer?: Analyzer,
): WindowRetention {
  const after = new Map([...bank.files].map(([filename, file]) => [filename, file.content]));
  for (const write of applied.writes) after.set(write.filename, write.content);
  const filenames = window.notes.map((note) => note.filename);
  const written = citedTexts(plan, filenames);
  const place = placeReader(after);
  const into = new Map(accounting.dispositions.map((d) => [d.note, d.into ?? []]));
  return checkWindow(
    {
      notes: window.notes,
      fates: accounting.dispositions,
      before: [...[...bank.files.values()].map((file) => file.content), window.synthesis],
      after: [...after.values(), synthesis],
      cited: (note) => written.get(note) ?? (into.get(note) ?? []).flatMap((where) => place(where) ?? []),
    },
    analyzer,
  );
}

/** Note → what the changes citing it write (a whole file's content, an edit's content and title). */
function citedTexts(plan: Pick<Plan, 'changes'>, window: readonly string[]): Map<string, string[]> {
  const texts = new Map<string, string[]>();
  const cite = (refs: readonly NoteRef[] | undefined, text: string) => {
    for (const ref of refs ?? []) {
      const note = resolveRef(ref, window);
      if (note) texts.set(note, [...(texts.get(note) ?? []), text]);
    }
  };
  for (const change of plan.changes) {
    if (change.action === 'write') cite(change.sources, change.content);
    else for (const edit of change.edits) cite(edit.sources, [edit.title ?? '', edit.content ?? ''].join('\n'));
  }
  return texts;
}

/** `file.md` or `file.md#A > B` (a disposition's `into`) → that file's or section's text, with its sub-sections. */
function placeReader(files: ReadonlyMap<string, string>): (into: string) => string | undefined {
  const outlines = new Map<string, Outline>();
  return (into) => {
    const hash = into.indexOf('#');
    const filename = hash < 0 ? into : into.slice(0, hash);
    const content = files.get(filename) ?? files.get(filename.normalize('NFC'));
    if (content === undefined) return undefined;
    const path = hash < 0 ? [] : into.slice(hash + 1).split(' > ');
    if (path.length === 0) return content;
    let outline = outlines.get(filename);
    if (!outline) outlines.set(filename, (outline = outlineOf(content)));
    const heading = sectionAt(outline.headings, path);
    return heading ? outline.text.slice(heading.start, heading.end) : undefined;
  };
}

/** Missing items of the notes a plan says it kept: what a retry names, a refusal refuses. */
export const gapSize = (retention: WindowRetention): number => retention.gaps.reduce((sum, gap) => sum + (gap.missing_count ?? gap.missing?.length ?? 0), 0);

/**
 * The gaps in words, one line per note ("note 3 (…), integrated into progress.md#Done: the number
 * "8443", …"), numbered as the prompt's fences number the notes. Null when there is none.
 */
export function retentionProblem(retention: WindowRetention, accounting: Pick<Accounting, 'dispositions'>, window: readonly string[]): string | null {
  if (retention.gaps.length === 0) return null;
  const fate = new Map(accounting.dispositions.map((d) => [d.note, d]));
  const lines = retention.gaps.map((gap) => {
    const d = fate.get(gap.note);
    const said =
      d?.status === 'superseded'
        ? `superseded by ${d.by !== undefined && window.includes(d.by) ? `note ${window.indexOf(d.by) + 1}` : JSON.stringify(d.by ?? '?')}, which does not carry`
        : `integrated into ${(d?.into ?? []).join('; ') || 'the bank'}, which lacks`;
    return `- note ${window.indexOf(gap.note) + 1} (${gap.note}), ${said}: ${describeMissing(gap)}`;
  });
  return `it leaves out facts of ${retention.gaps.length} note(s) it says it kept; these items are nowhere in the bank or the synthesis it writes:\n${lines.join('\n')}`;
}

/** The gaps in one line, for a warning: "leaves out facts of 2 note(s) it says it kept (a.md: the number "8443"; …)". */
export function retentionSummaryLine(retention: WindowRetention): string {
  const shown = retention.gaps.slice(0, 5).map((gap) => `${gap.note}: ${describeMissing(gap)}`);
  return `leaves out facts of ${retention.gaps.length} note(s) it says it kept (${shown.join('; ')}${retention.gaps.length > 5 ? '; …' : ''})`;
}

/** How the reminder of missing facts opens (the growth bench counts the model calls it starts). */
export const RETENTION_REMINDER_OPENING = 'Your plan drops facts of notes it says it kept';

/** Said after a plan that leaves out facts of notes it says it kept; the problem fenced (it quotes the notes). */
export function retentionReminder(problem: string, nonce: string): ChatMessage {
  return {
    role: 'user',
    content: `${RETENTION_REMINDER_OPENING}:\n${fenceReason(nonce, problem)}\nAnswer again with the whole plan, as the same JSON object: write each missing fact where its note belongs, as the note states it (its numbers, dates, names, paths and identifiers as written), or, if a note is obsolete or not worth keeping, say so honestly in "notes" (superseded by the note that replaces it and carries its facts, or discarded with the reason).`,
  };
}

/** What the result says of the notes' retention (LIVE_MEM_RETENTION): counts over the run, and every note not wholly retained. */
export interface RetentionSummary {
  mode: RetentionMode;
  checked: number;
  retained: number;
  partly_retained: number;
  not_retained: number;
  let_go: number;
  /** Each note whose items were not all found: what it lost (discarded notes: what was let go). */
  notes: RetentionEntry[];
}

/** Adds a committed window's entries to the run's summary (`result.retention`). */
export function addToSummary(summary: RetentionSummary | undefined, mode: RetentionMode, entries: readonly RetentionEntry[]): RetentionSummary {
  const all = summary ?? { mode, checked: 0, retained: 0, partly_retained: 0, not_retained: 0, let_go: 0, notes: [] };
  const counts = countStatuses(entries);
  return {
    ...all,
    checked: all.checked + entries.length,
    retained: all.retained + counts.retained,
    partly_retained: all.partly_retained + counts.partly_retained,
    not_retained: all.not_retained + counts.not_retained,
    let_go: all.let_go + counts.let_go,
    notes: [...all.notes, ...entries.filter((entry) => entry.status !== 'retained')],
  };
}

/** A warning for a committed window that kept notes without all their items: never silent. */
export function retentionWarning(entries: readonly RetentionEntry[], window: string, mode: RetentionMode): string | null {
  const lost = entries.filter((entry) => entry.status === 'partly_retained' || entry.status === 'not_retained');
  if (lost.length === 0) return null;
  const shown = lost.slice(0, 5).map((entry) => `${entry.note} (${STATUS_WORDS[entry.status]}: ${describeMissing(entry)})`);
  const after = mode === 'retry' ? ', after asking the model once more' : '';
  return `${window}: ${lost.length} note(s) committed without all their facts in the bank${after}: ${shown.join('; ')}${lost.length > 5 ? '; …' : ''}; history keeps every note whole`;
}
