import { invalid } from '../../shared/errors.js';
import type { Plan } from './plan.js';
import { retentionWithout } from '../retention/record.js';

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
 * Both sit in the commit record and in the history's record.json, which are immutable: "why does
 * the bank say this?" is answered from them (recall/sources.ts), with no index of its own.
 */
export type NoteRef = number | string;

export interface RawDisposition {
  note: NoteRef;
  status: string;
  by?: string;
  reason?: string;
  into?: string;
}

export interface ProvenanceEntry {
  filename: string;
  /** Heading path, outermost first; [] when the whole file was written. */
  path: string[];
  /** Note file names, oldest first. */
  notes: string[];
}

export type DispositionStatus = 'integrated' | 'superseded' | 'discarded' | 'unaccounted';
export const DISPOSITION_STATUSES: readonly DispositionStatus[] = ['integrated', 'superseded', 'discarded', 'unaccounted'];

export interface Disposition {
  note: string;
  status: DispositionStatus;
  /** integrated: where, as `file.md` or `file.md#A > B` (or what the model named, e.g. the synthesis). */
  into?: string[];
  /** superseded: the note (file name) or what superseded it. */
  by?: string;
  /** discarded: why, one line. */
  reason?: string;
}

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

/** Text the model gives (a reason, a superseding note) is kept to one bounded line. */
const MAX_TEXT = 200;
const line = (text: unknown): string => String(text).replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT);

/** A `sources` list as the model wrote it: numbers and strings kept, anything else left out. */
export function parseRefs(raw: unknown): NoteRef[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = Array.isArray(raw) ? raw : [raw];
  return list.filter((ref): ref is NoteRef => typeof ref === 'number' || (typeof ref === 'string' && ref.trim() !== ''));
}

/** The plan's `notes` list, leniently: an entry without a note or a status says nothing. */
export function parseDispositions(raw: unknown): RawDisposition[] {
  if (!Array.isArray(raw)) return [];
  const found: RawDisposition[] = [];
  for (const entry of raw) {
    if (typeof entry !== 'object' || entry === null) continue;
    const item = entry as Record<string, unknown>;
    const note = item.note ?? item.ref ?? item.id;
    const status = item.status ?? item.disposition;
    if ((typeof note !== 'number' && typeof note !== 'string') || typeof status !== 'string') continue;
    const into = [item.file ?? item.filename, item.section].filter((part) => typeof part === 'string' && part.trim() !== '').join('#');
    found.push({
      note,
      status: status.trim().toLowerCase(),
      ...(item.by !== undefined && item.by !== null ? { by: line(item.by) } : {}),
      ...(typeof item.reason === 'string' ? { reason: line(item.reason) } : {}),
      ...(into ? { into: line(into) } : {}),
    });
  }
  return found;
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

/** The bank file a plan's file name resolves to when the plan changes it (NFC, as apply-plan.ts resolves names). */
export function writtenName(applied: { writes: ReadonlyArray<{ filename: string }> }): (filename: string) => string | undefined {
  const written = new Map(applied.writes.map((write) => [write.filename.normalize('NFC'), write.filename]));
  return (filename) => written.get(filename.normalize('NFC'));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Checks a stored record's provenance and dispositions (a record is input: pending.ts); both are
 * optional (records written before they existed). Every note named must be one of the record's, every
 * file one it writes. Throws `invalid_input`.
 */
export function checkProvenance(provenance: unknown, dispositions: unknown, notes: ReadonlySet<string>, written: ReadonlySet<string>): void {
  if (provenance !== undefined) {
    if (!Array.isArray(provenance) || provenance.length > 100_000) throw invalid('its provenance is not a list (or an endless one)');
    for (const entry of provenance) {
      if (!isObject(entry) || typeof entry.filename !== 'string' || !isStringList(entry.path) || !isStringList(entry.notes)) {
        throw invalid('one of its provenance entries is malformed (filename, path, notes)');
      }
      if (!written.has(entry.filename)) throw invalid(`its provenance names ${JSON.stringify(entry.filename)}, a file it does not write`);
      const stray = entry.notes.find((note) => !notes.has(note));
      if (stray !== undefined) throw invalid(`its provenance cites ${JSON.stringify(stray)}, which is not one of its notes`);
    }
  }
  if (dispositions !== undefined) {
    if (!Array.isArray(dispositions) || dispositions.length > notes.size) throw invalid('its dispositions are not a list of its notes');
    for (const entry of dispositions) {
      if (
        !isObject(entry) ||
        !notes.has(String(entry.note)) ||
        !DISPOSITION_STATUSES.includes(entry.status as DispositionStatus) ||
        (entry.into !== undefined && !isStringList(entry.into)) ||
        (entry.by !== undefined && typeof entry.by !== 'string') ||
        (entry.reason !== undefined && typeof entry.reason !== 'string')
      ) {
        throw invalid('one of its dispositions is malformed, or names a note it does not hold');
      }
    }
  }
}

/** Whether a provenance entry's section bears on `path`: the same section, one inside it, or one holding it (a whole file: []). */
export const bearsOn = (entryPath: readonly string[], path: readonly string[]): boolean => {
  const n = Math.min(entryPath.length, path.length);
  for (let i = 0; i < n; i++) if (entryPath[i]?.toLowerCase() !== path[i]?.toLowerCase()) return false;
  return true;
};

/**
 * A consolidation's record.json as it reads once `gone` notes are forgotten: its `notes`, and its
 * provenance, dispositions and retention, without them (a section none of whose notes is left loses its entry).
 * The one place both the store's history and a purged backup's copy are rewritten from (core/forget).
 */
export function recordWithout(raw: Record<string, unknown>, gone: ReadonlySet<string>): Record<string, unknown> {
  const keep = (name: unknown) => !gone.has(String(name));
  const next: Record<string, unknown> = { ...raw, notes: Array.isArray(raw.notes) ? raw.notes.filter(keep) : [] };
  if (Array.isArray(raw.provenance)) {
    next.provenance = (raw.provenance as Array<{ notes?: unknown }>)
      .map((entry) => ({ ...entry, notes: Array.isArray(entry?.notes) ? entry.notes.filter(keep) : [] }))
      .filter((entry) => entry.notes.length > 0);
  }
  if (Array.isArray(raw.dispositions)) {
    next.dispositions = (raw.dispositions as Array<{ note?: unknown; by?: unknown }>)
      .filter((entry) => keep(entry?.note))
      .map((entry) => (entry.by !== undefined && !keep(entry.by) ? { ...entry, by: '(a forgotten note)' } : entry));
  }
  // What the retention check says of a note quotes it: it goes with the note.
  if (raw.retention !== undefined) next.retention = retentionWithout(raw.retention, gone);
  return next;
}

/**
 * A consolidation's record.json without its copy of the synthesis it wrote, a note of the removal in
 * its place (what removed it, when): a forget's (the synthesis may quote a forgotten note, and each
 * consolidation carries the last one forward), or a correction's that took a secret out of the
 * synthesis. Null when it holds none (a compaction's, a revision's, one cleaned already).
 */
export function recordWithoutSynthesis(
  raw: Record<string, unknown>,
  removal: { at: string } & ({ forget_id: string } | { revision_id: string }),
): Record<string, unknown> | null {
  if (raw.synthesis === undefined) return null;
  const { synthesis: _dropped, ...rest } = raw;
  return { ...rest, synthesis_removed: removal };
}
