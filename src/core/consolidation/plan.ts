import { ReplyFormatError, replyJson } from '../../llm/reply-json.js';
import { type SectionEdit, sectionEdit } from '../markdown/edit.js';

/**
 * The model's answer, normalised. Two reply formats are accepted:
 *
 * live-mem's own, with section edits:
 *   { "files": [ { "filename": "a.md", "action": "create" | "rewrite", "content": "…", "sources": [1, 2] },
 *                { "filename": "b.md", "action": "edit",
 *                  "edits": [ { "op": "append", "section": "Progress > Done", "content": "- x", "sources": [3] },
 *                             { "op": "add", "section": "Progress", "title": "Blocked", "content": "…" } ] } ],
 *     "notes": [ { "note": 4, "status": "superseded", "by": 5 }, { "note": 6, "status": "discarded", "reason": "…" } ],
 *     "synthesis": "…" }
 *
 * `sources` cite the notes a change came from, by their fence number (or file name); `notes` says
 * what became of the window's notes that no change cites (provenance.ts accounts for them).
 *
 * and the Python server's (seed 000 §3.3), so prompts and models tuned for it keep working:
 *   { "bank_files": [ { "filename": "a.md", "content": "…", "action": "created" | "updated" } ], "synthesis": "…" }
 */
export type NoteRef = number | string;

export interface RawDisposition {
  note: NoteRef;
  status: string;
  by?: string;
  reason?: string;
  into?: string;
}

export type FileChange = { filename: string; action: 'write'; content: string; sources?: NoteRef[] } | { filename: string; action: 'edit'; edits: CitedEdit[] };

/** A section edit of a plan, with the notes it came from. */
export type CitedEdit = SectionEdit & { sources?: NoteRef[] };

export interface Plan {
  changes: FileChange[];
  synthesis: string;
  /** What became of the window's notes, as the model says it (absent: it said nothing, e.g. the Python server's format). */
  notes?: RawDisposition[];
  /** The reply was in the Python server's format (`bank_files`), which cites no note. */
  python?: boolean;
}

export function parsePlan(reply: string): Plan {
  const raw = replyJson(reply);
  if (!isObject(raw)) throw new ReplyFormatError('the reply is not a JSON object');
  const synthesis = raw.synthesis;
  if (typeof synthesis !== 'string') throw new ReplyFormatError('the reply has no "synthesis" string');
  const entries = raw.files ?? raw.bank_files ?? [];
  if (!Array.isArray(entries)) throw new ReplyFormatError('"files" must be a list');
  const notes = raw.notes === undefined ? undefined : parseDispositions(raw.notes);
  return {
    changes: entries.map(toChange),
    synthesis,
    ...(notes ? { notes } : {}),
    ...(raw.files === undefined && raw.bank_files !== undefined ? { python: true } : {}),
  };
}

function toChange(entry: unknown, index: number): FileChange {
  if (!isObject(entry) || typeof entry.filename !== 'string') throw new ReplyFormatError(`files[${index}] has no filename`);
  const action = String(entry.action ?? (Array.isArray(entry.edits) ? 'edit' : 'rewrite')).toLowerCase();
  if (action === 'edit') {
    if (!Array.isArray(entry.edits)) throw new ReplyFormatError(`files[${index}] (${entry.filename}): an edit needs an "edits" list`);
    const edits = entry.edits.map((edit, i): CitedEdit => {
      const sources = parseRefs((edit as Record<string, unknown> | null)?.sources);
      return { ...sectionEdit(edit, `${entry.filename} edits[${i}]`), ...(sources ? { sources } : {}) };
    });
    return { filename: entry.filename, action: 'edit', edits };
  }
  if (!['create', 'created', 'rewrite', 'update', 'updated', 'replace'].includes(action)) {
    throw new ReplyFormatError(`files[${index}] (${entry.filename}): unknown action ${JSON.stringify(action)}`);
  }
  if (typeof entry.content !== 'string') throw new ReplyFormatError(`files[${index}] (${entry.filename}): "content" must be a string`);
  const sources = parseRefs(entry.sources);
  return { filename: entry.filename, action: 'write', content: entry.content, ...(sources ? { sources } : {}) };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text the model gives (a reason, a superseding note) is kept to one bounded line. */
export const MAX_TEXT = 200;
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
