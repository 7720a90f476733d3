/**
 * The second half of an ingest, once every entry is checked: the notes compared with what the space
 * holds or held, the new ones written create-only, and the result told. Its own module so that
 * ingest.ts reads as the all-or-nothing check and the lease, and this one as the writes and their
 * accounting (what was written, present, forgotten, raced).
 */
import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { isoSeconds } from '../note-name.js';
import type { KindCount } from '../redact/redact.js';
import type { Corpus } from './corpus.js';
import type { PreparedNote } from './ingest-entry.js';
import { formatNoteFile } from './note-file.js';

export interface IngestProgress {
  phase: 'checking' | 'writing';
  done: number;
  /** Known while writing; null while entries are still being read. */
  total: number | null;
}

export type IngestResult = {
  status: 'ok';
  space_id: string;
  dry_run: boolean;
  /** Entries read (a memory.jsonl's entities, a folder's files). */
  entries: number;
  /** Notes written; a dry run says `would_write` instead. */
  written?: number;
  would_write?: number;
  /** Entries whose note the space holds (live or consolidated), and repeats within the input. */
  already_present: number;
  /** Entries whose note a person forgot: not written again. */
  forgotten?: number;
  space_created?: true;
  would_create_space?: true;
  time_range: { oldest: string | null; newest: string | null };
  agents: string[];
  /** The first notes written (or to write), oldest first, their content cut. */
  first: Array<{ filename: string; timestamp: string; agent: string; category: string; tags: string[]; content: string }>;
  redacted?: KindCount[];
  private_removed?: number;
};

export interface IngestDeps {
  /** Writes a note create-only (`precondition_failed` when its name exists), as `live_note` does. */
  createNote(spaceId: string, key: string, body: string): Promise<void>;
  /** Whether this caller's first note to a missing space creates it (LIVE_MEM_AUTO_CREATE_SPACES). */
  createsSpaces(caller: Caller): boolean;
  /** Creates the space with the default rules; false when another writer made it first. */
  createSpaceOnce(caller: Caller, spaceId: string): Promise<boolean>;
}

/** The notes a result shows, oldest first (a dry run's preview). */
const SAMPLE_NOTES = 5;
const PREVIEW_CHARS = 120;

/** Note names the space holds or held: live, consolidated, and forgotten (a forget is never undone by a re-run). */
async function presentNames(corpus: Corpus, spaceId: string): Promise<{ held: Set<string>; forgotten: ReadonlySet<string> }> {
  const held = new Set((await corpus.liveNames(spaceId)).map((name) => name.filename));
  for (const record of await corpus.history(spaceId)) if (record.kind === 'consolidation') for (const name of record.notes) held.add(name);
  return { held, forgotten: corpus.forgotten(spaceId).names };
}

/** Writes the checked notes `checked.byName` holds that `spaceId` does not (none on a dry run), creating the space if it is missing. */
export async function writeChecked(
  context: CoreContext,
  corpus: Corpus,
  deps: IngestDeps,
  caller: Caller,
  spaceId: string,
  checked: { exists: boolean; dryRun: boolean; entries: number; byName: Map<string, PreparedNote> },
  options: { onProgress?: (event: IngestProgress) => void },
): Promise<IngestResult> {
  const { storage } = context;
  const { exists, dryRun, entries, byName } = checked;
  const { held, forgotten } = exists ? await presentNames(corpus, spaceId) : { held: new Set<string>(), forgotten: new Set<string>() };
  const notes = [...byName.values()].sort((a, b) => a.time.getTime() - b.time.getTime() || (a.filename < b.filename ? -1 : 1));
  const toWrite = notes.filter((note) => !held.has(note.filename) && !forgotten.has(note.filename));
  const skippedForgotten = notes.filter((note) => forgotten.has(note.filename) && !held.has(note.filename)).length;

  let spaceCreated = false;
  let written = 0;
  let racedPresent = 0;
  if (!dryRun && toWrite.length > 0) {
    if (!exists) spaceCreated = await deps.createSpaceOnce(caller, spaceId);
    try {
      await mapLimit(toWrite, storage.parallelism, async (note) => {
        const body = formatNoteFile(
          { timestamp: isoSeconds(note.time), agent: note.agent, category: note.category, tags: note.tags, space_id: spaceId },
          note.content,
        );
        try {
          await deps.createNote(spaceId, spaceKeys(spaceId).note(note.filename), body);
          written++;
        } catch (error) {
          // Written meanwhile by another run of the same input: present, not an error.
          if (!isLiveMemError(error, 'precondition_failed')) throw error;
          racedPresent++;
        }
        options.onProgress?.({ phase: 'writing', done: written + racedPresent, total: toWrite.length });
      });
    } catch (error) {
      const code = isLiveMemError(error) ? error.code : 'storage_error';
      const message = error instanceof Error ? error.message : String(error);
      throw new LiveMemError(
        code,
        `${message} (${written} of ${toWrite.length} notes were written before it: run the same ingest again to write the rest)`,
        {
          ...(isLiveMemError(error) ? error.data : {}),
          written,
        },
        { cause: error },
      );
    }
  }

  const redacted = sumKinds(toWrite.flatMap((note) => note.redacted));
  const privateRemoved = toWrite.reduce((sum, note) => sum + note.private_removed, 0);
  const first = notes[0];
  const last = notes[notes.length - 1];
  return {
    status: 'ok',
    space_id: spaceId,
    dry_run: dryRun,
    entries,
    ...(dryRun ? { would_write: toWrite.length } : { written }),
    // Repeats within the input count here too: they name one note.
    already_present: entries - toWrite.length - skippedForgotten + racedPresent,
    ...(skippedForgotten > 0 ? { forgotten: skippedForgotten } : {}),
    ...(spaceCreated ? { space_created: true as const } : {}),
    ...(!exists && dryRun ? { would_create_space: true as const } : {}),
    time_range: { oldest: first ? isoSeconds(first.time) : null, newest: last ? isoSeconds(last.time) : null },
    agents: [...new Set(notes.map((note) => note.agent))].sort(),
    first: toWrite.slice(0, SAMPLE_NOTES).map((note) => ({
      filename: note.filename,
      timestamp: isoSeconds(note.time),
      agent: note.agent,
      category: note.category,
      tags: note.tags,
      content: note.content.length > PREVIEW_CHARS ? `${note.content.slice(0, PREVIEW_CHARS)}…` : note.content,
    })),
    ...(redacted.length > 0 ? { redacted } : {}),
    ...(privateRemoved > 0 ? { private_removed: privateRemoved } : {}),
  };
}

/** The redactions of several notes, summed by kind. */
function sumKinds(kinds: readonly KindCount[]): KindCount[] {
  const totals = new Map<string, number>();
  for (const { kind, count } of kinds) totals.set(kind, (totals.get(kind) ?? 0) + count);
  return [...totals].map(([kind, count]) => ({ kind, count }));
}
