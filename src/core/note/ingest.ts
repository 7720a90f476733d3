import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import { spaceKeys } from '../layout.js';
import type { Corpus } from './corpus.js';
import type { KindCount } from '../redact/redact.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { isProblem, prepareEntry, type IngestItem, type PreparedNote } from './ingest-entry.js';
import { formatNoteFile } from './note-file.js';
import { isoSeconds } from '../note-name.js';

export type { IngestEntry, IngestItem, IngestProblem } from './ingest-entry.js';

export interface IngestInput {
  space_id: string;
  /** Check everything and say what would be written; write nothing (and create no space). */
  dry_run?: boolean;
}

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

/** A refusal lists this many problems; the count says how many there were. */
const LISTED_PROBLEMS = 20;
/** The notes a result shows, oldest first (a dry run's preview). */
const SAMPLE_NOTES = 5;
const PREVIEW_CHARS = 120;

export interface IngestDeps {
  /** Writes a note create-only (`precondition_failed` when its name exists), as `live_note` does. */
  createNote(spaceId: string, key: string, body: string): Promise<void>;
  /** Whether this caller's first note to a missing space creates it (LIVE_MEM_AUTO_CREATE_SPACES). */
  createsSpaces(caller: Caller): boolean;
  /** Creates the space with the default rules; false when another writer made it first. */
  createSpaceOnce(caller: Caller, spaceId: string): Promise<boolean>;
}

/**
 * Notes written with the times they were taken (a chat history, a meeting log, another tool's
 * memory), so `since`/`until`/`before` work on them as on any note. Owner or admin only: an entry
 * names its agent and its time, which no other caller may choose.
 *
 * All or nothing at checking time: every entry is checked (and redacted) before the first write,
 * and one bad entry refuses the whole input, naming each bad one. Writes are create-only and a
 * note's name is a function of its entry (ingest-entry.ts), so running the same input again
 * writes nothing: notes still in live/, consolidated since, or forgotten by a person are skipped.
 */
export function createIngest(context: CoreContext, corpus: Corpus, deps: IngestDeps) {
  const { storage } = context;

  /** Note names the space holds or held: live, consolidated, and forgotten (a forget is never undone by a re-run). */
  const presentNames = async (spaceId: string): Promise<{ held: Set<string>; forgotten: ReadonlySet<string> }> => {
    const held = new Set((await corpus.liveNames(spaceId)).map((name) => name.filename));
    for (const record of await corpus.history(spaceId)) if (record.kind === 'consolidation') for (const name of record.notes) held.add(name);
    return { held, forgotten: corpus.forgotten(spaceId).names };
  };

  const spaceExists = async (spaceId: string): Promise<boolean> => {
    try {
      await requireSpace(context, spaceId);
      return true;
    } catch (error) {
      if (isLiveMemError(error, 'not_found')) return false;
      throw error;
    }
  };

  const ingest = async (
    caller: Caller,
    input: IngestInput,
    items: AsyncIterable<IngestItem> | Iterable<IngestItem>,
    options: { onProgress?: (event: IngestProgress) => void } = {},
  ): Promise<IngestResult> => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'admin', spaceId);
    const dryRun = input.dry_run === true;
    const settings = { agent: caller.agent, now: context.clock(), maxNoteChars: context.limits.maxNoteChars, redact: context.redact };

    const byName = new Map<string, PreparedNote>();
    const problems: Array<{ at: string; problem: string }> = [];
    let entries = 0;
    for await (const item of items) {
      entries++;
      if (isProblem(item)) problems.push(item);
      else {
        try {
          const note = prepareEntry(item, settings);
          byName.set(note.filename, note);
        } catch (error) {
          if (!isLiveMemError(error, 'invalid_input')) throw error;
          problems.push({ at: item.at, problem: error.message });
        }
      }
      if (entries % 500 === 0) options.onProgress?.({ phase: 'checking', done: entries, total: null });
    }
    if (problems.length > 0) {
      const listed = problems.slice(0, LISTED_PROBLEMS);
      const more = problems.length > listed.length ? `; and ${problems.length - listed.length} more` : '';
      throw new LiveMemError(
        'invalid_input',
        `${problems.length} of ${entries} entries refused, nothing was written: ${listed.map((p) => `${p.at}: ${p.problem}`).join('; ')}${more}`,
        { refused: listed, refused_count: problems.length, entries },
      );
    }

    const exists = await spaceExists(spaceId);
    if (!exists && !deps.createsSpaces(caller)) {
      throw new LiveMemError('not_found', `space '${spaceId}' does not exist`, { space_id: spaceId });
    }
    // Under the space's lease when writing into an existing space: no consolidation moves a note out
    // of live/ between the look below and the writes (it would be written again beside its history).
    const lease = exists && !dryRun ? await lockSpace(context, spaceId, caller, 'ingest', { waitMs: PERSON_LEASE_WAIT_MS }) : null;
    try {
      return await ingestChecked(caller, spaceId, { exists, dryRun, entries, byName }, options);
    } finally {
      await lease?.release();
    }
  };

  async function ingestChecked(
    caller: Caller,
    spaceId: string,
    checked: { exists: boolean; dryRun: boolean; entries: number; byName: Map<string, PreparedNote> },
    options: { onProgress?: (event: IngestProgress) => void },
  ): Promise<IngestResult> {
    const { exists, dryRun, entries, byName } = checked;
    const { held, forgotten } = exists ? await presentNames(spaceId) : { held: new Set<string>(), forgotten: new Set<string>() };
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

  return ingest;
}

function sumKinds(kinds: readonly KindCount[]): KindCount[] {
  const totals = new Map<string, number>();
  for (const { kind, count } of kinds) totals.set(kind, (totals.get(kind) ?? 0) + count);
  return [...totals].map(([kind, count]) => ({ kind, count }));
}
