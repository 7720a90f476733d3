import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { authorize, type Caller, toAgentName } from '../caller.js';
import type { CoreContext } from '../context.js';
import { liveNoteKey } from '../layout.js';
import { formatNoteName, isoSeconds, type NoteName, parseNoteName, toStamp } from '../note-name.js';
import { requireSpace } from '../space-meta.js';
import { parseSince, validateCategory, validateLimit, validateSpaceId } from '../validate.js';
import type { Corpus } from './corpus.js';
import { createIngest } from './ingest.js';
import { newestLive } from './newest.js';
import { noteCreator } from './note-create.js';
import { formatNoteFile, normalizeTags } from './note-file.js';
import { givenAnchors } from '../anchors/stored.js';
import { MAX_READ_LIMIT, type NoteReadInput, type NoteSearchInput, type NoteWriteInput } from './note-inputs.js';
import { type LiveTextsOf, searchNotes } from './note-search.js';
import { liveNoteStats } from './note-stats.js';
import type { NoteView } from './note-view.js';

/** Creates a space with the default rules for a first note (the space service's create, under its claim). */
export type CreateSpaceForNote = (caller: Caller, spaceId: string) => Promise<unknown>;

export function createNoteService(context: CoreContext, corpus: Corpus, createSpace?: CreateSpaceForNote, liveTextsOf?: LiveTextsOf) {
  const { storage, limits } = context;
  const createNote = noteCreator(context);

  /** Reads one note; `null` when it was consolidated (moved away) since it was listed. */
  const readNote = (spaceId: string, name: NoteName): Promise<NoteView | null> => corpus.liveNote(spaceId, name);

  const readNotes = async (spaceId: string, names: NoteName[]): Promise<NoteView[]> =>
    (await mapLimit(names, storage.parallelism, (name) => readNote(spaceId, name))).filter((note): note is NoteView => note !== null);

  /**
   * A note's time, never earlier than or equal to this process's previous note's, to the
   * millisecond: names sort by millisecond, and a note takes less than one, so two notes in a row
   * would otherwise share it and sort by their random part. In a burst of more than a thousand
   * notes a second, times run a few milliseconds ahead of the clock.
   */
  let lastNoteMs = 0;
  const noteTime = (): Date => {
    lastNoteMs = Math.max(context.clock().getTime(), lastNoteMs + 1);
    return new Date(lastNoteMs);
  };

  /** Whether a note of this caller to a missing space creates it (LIVE_MEM_AUTO_CREATE_SPACES). */
  const createsSpaces = (caller: Caller): boolean =>
    createSpace !== undefined && (context.autoCreateSpaces === 'on' || (context.autoCreateSpaces === 'auto' && caller.localOwner === true));

  /**
   * The first note of a space that does not exist makes it. Two first notes at once (in one process
   * or two) both land in one space: the claim lets one creator through, the other answers
   * `already_exists` and writes its note into the space just made. `true` when this call made it.
   */
  const createSpaceOnce = async (caller: Caller, spaceId: string): Promise<boolean> => {
    try {
      await createSpace?.(caller, spaceId);
      return true;
    } catch (error) {
      if (isLiveMemError(error, 'already_exists')) return false;
      throw error;
    }
  };

  return {
    createsSpaces,

    /** Notes with the times they were taken, from another record: `live-mem ingest` (ingest.ts). */
    ingest: createIngest(context, corpus, { createNote, createsSpaces, createSpaceOnce }),

    async write(caller: Caller, input: NoteWriteInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      const category = validateCategory(input.category);
      const content = typeof input.content === 'string' ? input.content : '';
      if (content.trim().length === 0) throw invalid('content is empty');
      if (content.length > limits.maxNoteChars) {
        throw invalid(`content has ${content.length} characters; the limit is ${limits.maxNoteChars}`, { limit: limits.maxNoteChars });
      }
      const tags = normalizeTags(input.tags);
      const anchors = givenAnchors(input.anchors);
      const agent = caller.canChooseAgent && input.agent ? toAgentName(input.agent) : caller.agent;
      // Its secrets were masked and its `<private>` spans dropped on the way in (redact/stored-text.ts).
      let spaceCreated = false;

      for (let attempt = 0; ; attempt++) {
        const time = noteTime();
        const filename = formatNoteName(time, agent, category, context.randomId());
        const timestamp = isoSeconds(time);
        // Encoded once: the file's bytes and the answer's size.
        const body = Buffer.from(formatNoteFile({ timestamp, agent, category, tags, space_id: spaceId, ...(anchors.length > 0 ? { anchors } : {}) }, content));
        try {
          await createNote(spaceId, liveNoteKey(spaceId, filename), body);
          corpus.wroteLive(spaceId, { filename, timestamp, agent, category, tags: [...tags], content, ...(anchors.length > 0 ? { anchors } : {}) });
          return {
            status: 'created' as const,
            space_id: spaceId,
            filename,
            category,
            agent,
            tags,
            size: body.length,
            timestamp,
            ...(anchors.length > 0 ? { anchors } : {}),
            ...(spaceCreated ? { space_created: true } : {}),
          };
        } catch (error) {
          if (isLiveMemError(error, 'not_found') && !spaceCreated && createsSpaces(caller)) {
            spaceCreated = await createSpaceOnce(caller, spaceId);
            if (spaceCreated || attempt < 4) continue;
          }
          // Same millisecond and same six random characters: astronomically rare, but never an overwrite.
          if (!isLiveMemError(error, 'precondition_failed') || attempt >= 4) throw error;
        }
      }
    },

    async read(caller: Caller, input: NoteReadInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const limit = validateLimit(input.limit ?? 50, MAX_READ_LIMIT);
      const category = input.category ? validateCategory(input.category) : undefined;
      // Exact match, on the name as given or its filename-safe form (names the Python server wrote may hold '_').
      const agents = input.agent ? new Set([input.agent, toAgentName(input.agent)]) : undefined;
      const since = parseSince(input.since ?? '');
      // Names carry seconds: `since` is inclusive at one-second resolution, so a note is never missed.
      const sinceStamp = since ? toStamp(since) : undefined;
      const before = input.before ? parseNoteName(input.before) : undefined;
      if (before === null) throw invalid(`before must be a note's filename, got ${JSON.stringify(String(input.before).slice(0, 80))}`);
      await requireSpace(context, spaceId);
      // The newest matches only (a note a forget named is left out even while still in live/).
      const { names, more } = await newestLive(context, corpus, spaceId, limit, {
        keep: (name) => (category === undefined || name.category === category) && (agents === undefined || agents.has(name.agent)),
        ...(before ? { before } : {}),
        ...(sinceStamp === undefined ? {} : { since: sinceStamp }),
      });
      const notes = await readNotes(spaceId, names);
      return { status: 'ok' as const, space_id: spaceId, notes, total: notes.length, has_more: more };
    },

    search: (caller: Caller, input: NoteSearchInput) => searchNotes(context, corpus, liveTextsOf, caller, input),

    /** Count, total size and time range of a space's live notes (sizes cost a stat per note on fs). */
    stats: (spaceId: string) => liveNoteStats(storage, spaceId),
  };
}

export type NoteService = ReturnType<typeof createNoteService>;
