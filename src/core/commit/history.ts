import { isUtf8 } from 'node:buffer';
import { LiveMemError } from '../../shared/errors.js';

/**
 * The notes one consolidation moved out of `live/`, byte for byte, in one object:
 * `{space}/history/{consolidation_id}/notes.json`. One object, not a file per note: a consolidation
 * of 500 notes writes once instead of 500 times, and a space's history stays a few files per
 * consolidation for backups and exports to carry. A body that is not UTF-8 is kept in base64.
 */
const FORMAT = 'live-mem-history-notes';
const FORMAT_VERSION = 1;

export interface HistoryNote {
  filename: string;
  body: Buffer;
}

export function encodeHistoryNotes(notes: readonly HistoryNote[]): string {
  const entries = notes.map(({ filename, body }) =>
    isUtf8(body) ? { filename, content: body.toString('utf8') } : { filename, content_base64: body.toString('base64') },
  );
  return `${JSON.stringify({ format: FORMAT, format_version: FORMAT_VERSION, notes: entries }, null, 1)}\n`;
}

/** The notes of a notes.json; `storage_error` with data `damaged` (a file there but unreadable, not the store failing) when it cannot be decoded. */
export function decodeHistoryNotes(body: Buffer, where: string): HistoryNote[] {
  let parsed: { format?: unknown; format_version?: unknown; notes?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch (cause) {
    throw new LiveMemError('storage_error', `${where} is not valid JSON`, { damaged: true }, { cause });
  }
  if (parsed?.format !== FORMAT || parsed.format_version !== FORMAT_VERSION || !Array.isArray(parsed.notes)) {
    throw new LiveMemError('storage_error', `${where} is not a ${FORMAT} v${FORMAT_VERSION} file`, { damaged: true });
  }
  return (parsed.notes as Array<{ filename?: unknown; content?: unknown; content_base64?: unknown } | null>).map((entry) => {
    const note = entry ?? {};
    if (typeof note.filename !== 'string') throw new LiveMemError('storage_error', `${where} holds a note without a filename`, { damaged: true });
    if (typeof note.content === 'string') return { filename: note.filename, body: Buffer.from(note.content, 'utf8') };
    if (typeof note.content_base64 === 'string') return { filename: note.filename, body: Buffer.from(note.content_base64, 'base64') };
    throw new LiveMemError('storage_error', `${where} holds ${note.filename} without a body`, { damaged: true });
  });
}

/**
 * The sections one compaction rewrote, as they were before: `{space}/history/{cid}/preimages.json` =
 * `{"version":1,"sections":[{filename, path, content}]}`, written before the compaction's record.json.
 * `path` is the section's heading path, outermost first; `content` its whole text, heading line included.
 * Recall indexes them (source `bank_history`) and `history_read` returns them: nothing a compaction
 * rewrites is lost.
 */
const PREIMAGES_VERSION = 1;

export interface HistoryPreimage {
  filename: string;
  path: string[];
  content: string;
}

export function encodeHistoryPreimages(sections: readonly HistoryPreimage[]): string {
  const entries = sections.map(({ filename, path, content }) => ({ filename, path, content }));
  return `${JSON.stringify({ version: PREIMAGES_VERSION, sections: entries }, null, 1)}\n`;
}

/** The sections of a preimages.json; `storage_error` with data `damaged` when it cannot be decoded (as decodeHistoryNotes). */
export function decodeHistoryPreimages(body: Buffer, where: string): HistoryPreimage[] {
  let parsed: { version?: unknown; sections?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch (cause) {
    throw new LiveMemError('storage_error', `${where} is not valid JSON`, { damaged: true }, { cause });
  }
  if (parsed?.version !== PREIMAGES_VERSION || !Array.isArray(parsed.sections)) {
    throw new LiveMemError('storage_error', `${where} is not a v${PREIMAGES_VERSION} pre-images file`, { damaged: true });
  }
  return (parsed.sections as Array<{ filename?: unknown; path?: unknown; content?: unknown } | null>).map((entry, i) => {
    const section = entry ?? {};
    const path = section.path;
    if (
      typeof section.filename !== 'string' ||
      typeof section.content !== 'string' ||
      !Array.isArray(path) ||
      !path.every((heading) => typeof heading === 'string')
    ) {
      throw new LiveMemError('storage_error', `${where} holds a section (#${i}) without a filename, a heading path or its content`, { damaged: true });
    }
    return { filename: section.filename, path: path as string[], content: section.content };
  });
}
