import type { Disposition, ProvenanceEntry } from '../commit/record.js';
import { MAX_TEXT, type NoteRef, type Plan } from './plan.js';

/**
 * Where the bank's text came from. A plan cites, for each file it writes and each section edit,
 * the notes of its window the change came from (`sources`: a note's fence number, `<<<note i/n …>>>`,
 * or its file name), and says what became of the notes no change cites (`notes`: superseded by
 * another note, or discarded with a reason). From that, each consolidation records:
 *
 * - `provenance`: bank section ← notes, `[{filename, path, notes}]` (path [] = the whole file, written whole);
 * - `dispositions`: one per note of the window, `integrated` (into which sections), `superseded`,
 *   `discarded`, or `unaccounted` when the plan said nothing of it (reported, never hidden).
 *
 * Both sit in the commit record and in the history's record.json (commit/record.ts), which are immutable:
 * "why does the bank say this?" is answered from them (recall/sources.ts), with no index of its own.
 */
export interface Accounting {
  provenance: ProvenanceEntry[];
  dispositions: Disposition[];
  /** Notes of the window the plan neither cites nor disposes of. */
  unaccounted: string[];
  /** Citations naming no note of the window, as the plan wrote them; dropped from the provenance. */
  unknown: string[];
  /** The plan cites or disposes of at least one note (a plan in a format without citations does neither). */
  cites: boolean;
}

/** The window note a reference names: `3`, `"3"`, `"note 3"`, `"3/5"` (fence numbers, from 1) or a file name. */
export function resolveRef(ref: NoteRef, window: readonly string[]): string | undefined {
  const text = String(ref).trim();
  const number = /^(?:note\s*)?#?(\d{1,6})(?:\s*\/\s*\d+)?$/i.exec(text);
  if (number) return window[Number(number[1]) - 1];
  return window.includes(text) ? text : undefined;
}

const placeOf = (entry: Pick<ProvenanceEntry, 'filename' | 'path'>): string =>
  entry.path.length > 0 ? `${entry.filename}#${entry.path.join(' > ')}` : entry.filename;

/**
 * Accounts for a plan's notes. `window`: the note file names, in fence order. `written(name)`: the
 * bank file a plan's file name resolves to when the plan changes it, else undefined (a change that
 * leaves a file as it was fed nothing).
 */
export function accountPlan(plan: Plan, window: readonly string[], written: (filename: string) => string | undefined): Accounting {
  const unknown: string[] = [];
  let cites = false;
  const resolve = (refs: readonly NoteRef[] | undefined): string[] => {
    const notes = new Set<string>();
    for (const ref of refs ?? []) {
      cites = true;
      const note = resolveRef(ref, window);
      if (note) notes.add(note);
      else unknown.push(String(ref).slice(0, MAX_TEXT));
    }
    return [...notes];
  };
  const entries = new Map<string, ProvenanceEntry>();
  const cite = (filename: string, path: string[], refs: readonly NoteRef[] | undefined) => {
    const notes = resolve(refs);
    const file = written(filename);
    if (!file || notes.length === 0) return;
    const key = JSON.stringify([file, path]);
    const entry = entries.get(key) ?? { filename: file, path, notes: [] };
    entry.notes = window.filter((note) => entry.notes.includes(note) || notes.includes(note));
    entries.set(key, entry);
  };
  for (const change of plan.changes) {
    if (change.action === 'write') cite(change.filename, [], change.sources);
    else for (const edit of change.edits) cite(change.filename, edit.op === 'add' && edit.title ? [...edit.path, edit.title] : edit.path, edit.sources);
  }
  const provenance = [...entries.values()];

  const dispositions = new Map<string, Disposition>();
  for (const entry of provenance) {
    for (const note of entry.notes) {
      const known = dispositions.get(note) ?? { note, status: 'integrated', into: [] };
      known.into?.push(placeOf(entry));
      dispositions.set(note, known);
    }
  }
  for (const raw of plan.notes ?? []) {
    cites = true;
    const note = resolveRef(raw.note, window);
    if (!note) {
      unknown.push(String(raw.note).slice(0, MAX_TEXT));
      continue;
    }
    if (dispositions.has(note)) continue; // a citation says more than a status
    if (raw.status === 'integrated') dispositions.set(note, { note, status: 'integrated', into: raw.into ? [raw.into] : [] });
    else if (raw.status === 'superseded') {
      const by = raw.by === undefined ? undefined : (resolveRef(raw.by, window) ?? raw.by);
      dispositions.set(note, { note, status: 'superseded', ...(by ? { by } : {}) });
    } else if (raw.status === 'discarded') dispositions.set(note, { note, status: 'discarded', reason: raw.reason || '(no reason given)' });
  }
  const unaccounted = window.filter((note) => !dispositions.has(note));
  for (const note of unaccounted) dispositions.set(note, { note, status: 'unaccounted' });
  return { provenance, dispositions: window.map((note) => dispositions.get(note) as Disposition), unaccounted, unknown, cites };
}

/** How much a plan's accounting falls short: what a retry is asked to fix. Null when nothing does. */
export function accountingProblem(accounting: Accounting): string | null {
  const parts: string[] = [];
  if (accounting.unaccounted.length > 0)
    parts.push(`it says nothing of ${accounting.unaccounted.length} note(s) of the window (${accounting.unaccounted.join(', ')})`);
  if (accounting.unknown.length > 0)
    parts.push(`it cites ${accounting.unknown.length} note(s) that are not in the window (${accounting.unknown.slice(0, 10).join(', ')})`);
  return parts.length > 0 ? parts.join('; ') : null;
}

/** What a window's accounting leaves to say: citations dropped, notes unaccounted for (with why). */
export function accountingWarnings(accounting: Accounting, plan: Plan, window: string): string[] {
  const { unaccounted, unknown } = accounting;
  const warnings: string[] = [];
  if (unknown.length > 0) {
    warnings.push(
      `${window}: the plan cites ${unknown.length} note(s) not in the window (${unknown.slice(0, 10).join(', ')}); those citations were left out of the provenance`,
    );
  }
  if (unaccounted.length > 0) {
    const why = plan.python
      ? "the reply is in the Python server's format, which cites no note"
      : accounting.cites
        ? 'the plan says nothing of them'
        : 'the plan cites no note';
    const names = `${unaccounted.slice(0, 10).join(', ')}${unaccounted.length > 10 ? ', …' : ''}`;
    warnings.push(
      `${window}: ${unaccounted.length} note(s) consolidated without being accounted for (${why}): ${names}; history keeps them, marked "unaccounted"`,
    );
  }
  return warnings;
}

/** The bank file a plan's file name resolves to when the plan changes it (NFC, as commit/apply-plan.ts resolves names). */
export function writtenName(applied: { writes: ReadonlyArray<{ filename: string }> }): (filename: string) => string | undefined {
  const written = new Map(applied.writes.map((write) => [write.filename.normalize('NFC'), write.filename]));
  return (filename) => written.get(filename.normalize('NFC'));
}
