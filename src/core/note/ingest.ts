import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import type { Corpus } from './corpus.js';
import { type IngestItem, isProblem, type PreparedNote, prepareEntry } from './ingest-entry.js';
import { type IngestDeps, type IngestProgress, type IngestResult, writeChecked } from './ingest-write.js';

export type { IngestEntry, IngestItem, IngestProblem } from './ingest-entry.js';
export type { IngestProgress, IngestResult } from './ingest-write.js';

export interface IngestInput {
  space_id: string;
  /** Check everything and say what would be written; write nothing (and create no space). */
  dry_run?: boolean;
}

/** A refusal lists this many problems; the count says how many there were. */
const LISTED_PROBLEMS = 20;

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
      return await writeChecked(context, corpus, deps, caller, spaceId, { exists, dryRun, entries, byName }, options);
    } finally {
      await lease?.release();
    }
  };

  return ingest;
}
