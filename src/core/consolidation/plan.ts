import { normalizeLineEndings } from '../../shared/line-endings.js';
import type { SectionEdit, SectionOp } from '../markdown/edit.js';
import { parseDispositions, parseRefs, type NoteRef, type RawDisposition } from './provenance.js';

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

/** A reply that is not a usable plan (bad JSON or wrong shape): the model may do better if asked again. */
export class PlanFormatError extends Error {
  override readonly name = 'PlanFormatError';
}

/** Drops <think> blocks and code fences, and keeps the outermost JSON object. */
export function extractJson(reply: string): string {
  let text = reply.replace(/<think>[\s\S]*?<\/think>/gi, '').replace(/^[\s\S]*<\/think>/i, '');
  const fenced = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(text);
  if (fenced?.[1]?.includes('{')) text = fenced[1];
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new PlanFormatError('the reply holds no JSON object');
  return text.slice(start, end + 1);
}

/**
 * The JSON value of a model's reply (see extractJson); a PlanFormatError when there is none. Every
 * string in it has its line endings normalised (a model may answer `\r\n`): what it says is stored.
 */
export function replyJson(reply: string): unknown {
  try {
    return JSON.parse(extractJson(reply), (_key, value: unknown) => (typeof value === 'string' ? normalizeLineEndings(value) : value));
  } catch (error) {
    if (error instanceof PlanFormatError) throw error;
    throw new PlanFormatError(`the reply is not valid JSON (${(error as Error).message})`);
  }
}

export function parsePlan(reply: string): Plan {
  const raw = replyJson(reply);
  if (!isObject(raw)) throw new PlanFormatError('the reply is not a JSON object');
  const synthesis = raw.synthesis;
  if (typeof synthesis !== 'string') throw new PlanFormatError('the reply has no "synthesis" string');
  const entries = raw.files ?? raw.bank_files ?? [];
  if (!Array.isArray(entries)) throw new PlanFormatError('"files" must be a list');
  const notes = raw.notes === undefined ? undefined : parseDispositions(raw.notes);
  return {
    changes: entries.map(toChange),
    synthesis,
    ...(notes ? { notes } : {}),
    ...(raw.files === undefined && raw.bank_files !== undefined ? { python: true } : {}),
  };
}

function toChange(entry: unknown, index: number): FileChange {
  if (!isObject(entry) || typeof entry.filename !== 'string') throw new PlanFormatError(`files[${index}] has no filename`);
  const action = String(entry.action ?? (Array.isArray(entry.edits) ? 'edit' : 'rewrite')).toLowerCase();
  if (action === 'edit') {
    if (!Array.isArray(entry.edits)) throw new PlanFormatError(`files[${index}] (${entry.filename}): an edit needs an "edits" list`);
    const edits = entry.edits.map((edit, i): CitedEdit => {
      const sources = parseRefs((edit as Record<string, unknown> | null)?.sources);
      return { ...sectionEdit(edit, `${entry.filename} edits[${i}]`), ...(sources ? { sources } : {}) };
    });
    return { filename: entry.filename, action: 'edit', edits };
  }
  if (!['create', 'created', 'rewrite', 'update', 'updated', 'replace'].includes(action)) {
    throw new PlanFormatError(`files[${index}] (${entry.filename}): unknown action ${JSON.stringify(action)}`);
  }
  if (typeof entry.content !== 'string') throw new PlanFormatError(`files[${index}] (${entry.filename}): "content" must be a string`);
  const sources = parseRefs(entry.sources);
  return { filename: entry.filename, action: 'write', content: entry.content, ...(sources ? { sources } : {}) };
}

const OPS: SectionOp[] = ['replace', 'append', 'prepend', 'add', 'delete'];

/** One section edit as a plan (or a person's bank_write) gives it: `{op, section, content?, title?}`. */
export function sectionEdit(raw: unknown, where: string): SectionEdit {
  if (!isObject(raw)) throw new PlanFormatError(`${where} is not an object`);
  const op = String(raw.op ?? raw.action ?? '').toLowerCase() as SectionOp;
  if (!OPS.includes(op)) throw new PlanFormatError(`${where}: "op" must be one of ${OPS.join(', ')}`);
  const section = raw.section ?? raw.heading ?? raw.path ?? [];
  const path = Array.isArray(section)
    ? section.map(String)
    : String(section)
        .split('>')
        .map((part) => part.replace(/^#+\s*/, '').trim())
        .filter(Boolean);
  if (op !== 'add' && path.length === 0) throw new PlanFormatError(`${where}: "section" names no heading`);
  return {
    op,
    path,
    ...(typeof raw.content === 'string' ? { content: raw.content } : {}),
    ...(typeof raw.title === 'string' ? { title: raw.title.replace(/^#+\s*/, '') } : {}),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
