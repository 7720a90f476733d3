import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { listAll } from '../../storage/list.js';
import { authorize, toAgentName, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { Corpus } from './corpus.js';
import { matchesNeedle, searchableTexts } from './note-text.js';
import type { LiveTextsLookup } from './note-text.js';
import { newestLive } from './newest.js';
import { baseName, spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { parseSince, validateCategory, validateLimit, validateQuery, validateSpaceId } from '../validate.js';
import { createIngest } from './ingest.js';
import { formatNoteFile, normalizeTags } from './note-file.js';
import type { NoteView } from './note-view.js';

export type { NoteView } from './note-view.js';
import { formatNoteName, isoSeconds, parseNoteName, stampToIso, toStamp, type NoteName } from '../note-name.js';

export const MAX_READ_LIMIT = 1000;

export interface NoteWriteInput {
  space_id: string;
  category: string;
  content: string;
  /** Only the local owner may choose; other callers always write as themselves. */
  agent?: string;
  /** Comma-separated, or a list. */
  tags?: string | string[];
}

export interface NoteReadInput {
  space_id: string;
  limit?: number;
  category?: string;
  agent?: string;
  since?: string;
  /** A note's filename: only notes older than it (the next page after a read that had more). */
  before?: string;
}

export interface NoteSearchInput {
  space_id: string;
  query: string;
  limit?: number;
}

/** Creates a space with the default rules for a first note (the space service's create, under its claim). */
export type CreateSpaceForNote = (caller: Caller, spaceId: string) => Promise<unknown>;

/** What live_search knows of a space's live notes without reading them (recall's `liveTexts`). */
export type LiveTextsOf = (spaceId: string) => Promise<LiveTextsLookup>;

const NO_TEXTS: LiveTextsLookup = { matcher: () => () => 'unknown', remember: () => undefined };

export function createNoteService(context: CoreContext, corpus: Corpus, createSpace?: CreateSpaceForNote, liveTextsOf?: LiveTextsOf) {
  const { storage, limits } = context;

  /** Reads one note; `null` when it was consolidated (moved away) since it was listed. */
  const readNote = (spaceId: string, name: NoteName): Promise<NoteView | null> => corpus.liveNote(spaceId, name);

  const readNotes = async (spaceId: string, names: NoteName[]): Promise<NoteView[]> =>
    (await mapLimit(names, storage.parallelism, (name) => readNote(spaceId, name))).filter((note): note is NoteView => note !== null);

  /**
   * Spaces this process has seen exist, and when (the monotonic time the check was sent): a note
   * into one of them is written without reading `_meta.json` first. What keeps a space deleted by
   * another process deleted comes with the write:
   * - on a driver with folders (fs), the note is created only into its existing `live/` folder, and
   *   a space is deleted by taking its whole folder away in one step (`removeFolder`): a write into
   *   a deleted space fails by itself, at no cost to the others;
   * - elsewhere (S3), a space is trusted for `knownSpaceMs` after its meta was seen. A note whose PUT
   *   answered within that time landed before the meta could be gone for that long, and a delete
   *   waits longer than that between removing the meta and its last sweep: the note goes with the
   *   space. Past that time the meta is read again before the write, and after a PUT that answered
   *   late (the note is removed and refused if the space is gone). So a note is one request.
   * A space not seen yet is checked before the write, so a wrong space id writes nothing.
   */
  const knownSpaces = new Map<string, number>();

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
  const NOTE_TYPE = 'text/markdown; charset=utf-8';
  const notFound = (spaceId: string) => new LiveMemError('not_found', `space '${spaceId}' does not exist`, { space_id: spaceId });

  const createNote = async (spaceId: string, key: string, body: string): Promise<void> => {
    if (storage.removeFolder) {
      if (knownSpaces.has(spaceId)) {
        try {
          await storage.put(key, body, { ifNoneMatch: '*', contentType: NOTE_TYPE, inExistingFolder: true });
          return;
        } catch (error) {
          // No live/ folder: the space was deleted, or its last live notes were consolidated.
          if (!isLiveMemError(error, 'not_found')) throw error;
          knownSpaces.delete(spaceId);
        }
      }
      await requireSpace(context, spaceId);
      await storage.put(key, body, { ifNoneMatch: '*', contentType: NOTE_TYPE });
      // The folder may have been taken away between the check and the write, and made again by it.
      if (!(await storage.stat(spaceKeys(spaceId).meta))) {
        await storage.delete(key);
        throw notFound(spaceId);
      }
      knownSpaces.set(spaceId, 0);
      return;
    }
    let seenAt = knownSpaces.get(spaceId);
    if (seenAt === undefined || context.monotonic() - seenAt >= limits.knownSpaceMs) {
      const sentAt = context.monotonic();
      knownSpaces.delete(spaceId);
      await requireSpace(context, spaceId);
      knownSpaces.set(spaceId, sentAt);
      seenAt = sentAt;
    }
    await storage.put(key, body, { ifNoneMatch: '*', contentType: NOTE_TYPE });
    if (context.monotonic() - seenAt < limits.knownSpaceMs) return;
    // A PUT that answered late: the space may have been deleted meanwhile.
    if (!(await storage.stat(spaceKeys(spaceId).meta))) {
      knownSpaces.delete(spaceId);
      await storage.delete(key);
      throw notFound(spaceId);
    }
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
      const agent = caller.canChooseAgent && input.agent ? toAgentName(input.agent) : caller.agent;
      // Its secrets were masked and its `<private>` spans dropped on the way in (redact/stored-text.ts).
      let spaceCreated = false;

      for (let attempt = 0; ; attempt++) {
        const time = noteTime();
        const filename = formatNoteName(time, agent, category, context.randomId());
        const timestamp = isoSeconds(time);
        const body = formatNoteFile({ timestamp, agent, category, tags, space_id: spaceId }, content);
        try {
          await createNote(spaceId, spaceKeys(spaceId).note(filename), body);
          corpus.wroteLive(spaceId, { filename, timestamp, agent, category, tags: [...tags], content });
          return {
            status: 'created' as const,
            space_id: spaceId,
            filename,
            category,
            agent,
            tags,
            size: Buffer.byteLength(body),
            timestamp,
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

    async search(caller: Caller, input: NoteSearchInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const query = validateQuery(input.query);
      const limit = validateLimit(input.limit ?? 20, MAX_READ_LIMIT);
      await requireSpace(context, spaceId);

      const needle = query.toLowerCase();
      // Which notes are live is the listing's say; what they say comes from the texts the search
      // index keeps (a new process loads them from one small file beside the snapshot). Bodies are
      // read only for notes those do not know, and for the matches returned — checked again on the
      // body itself, so a stale or altered texts file can never put a wrong note in an answer.
      const textsLoaded = (liveTextsOf?.(spaceId) ?? Promise.resolve(NO_TEXTS)).catch((error: unknown) => {
        context.logger.warn(`live_search of '${spaceId}' reads every note: their texts are unavailable`, { error: String(error) });
        return NO_TEXTS;
      });
      // Where folders have versions, the texts first: their file may hold live/'s listing at the version
      // the folder is still at (a new process then reads no listing); elsewhere both at once.
      if (storage.version) await textsLoaded;
      const [texts, names] = await Promise.all([
        textsLoaded,
        corpus.liveNames(spaceId), // without consolidated notes, nor forgotten ones (tombstones)
      ]);
      const found: NoteView[] = [];
      const batch = storage.parallelism * 4;
      const pending: NoteName[] = [];
      let likely = 0; // pending notes whose known texts match
      const readPending = async () => {
        const views = await mapLimit(pending.splice(0), storage.parallelism, (name) => corpus.liveNote(spaceId, name));
        likely = 0;
        for (const view of views) {
          if (!view) continue; // consolidated since listed
          const read = searchableTexts(view);
          texts.remember(view.filename, read);
          if (matchesNeedle(read, needle)) found.push(view);
        }
      };
      const known = texts.matcher(needle);
      for (let i = names.length - 1; i >= 0 && found.length <= limit; i--) {
        const name = names[i] as NoteName;
        const match = known(name.filename);
        if (match === 'no-match') continue;
        pending.push(name);
        if (match === 'match') likely++;
        if (pending.length >= batch || found.length + likely > limit) await readPending();
      }
      if (pending.length > 0 && found.length <= limit) await readPending();
      const notes = found.slice(0, limit);
      return { status: 'ok' as const, space_id: spaceId, query, notes, total: notes.length, has_more: found.length > limit };
    },

    /** Count, total size and time range of a space's live notes (sizes cost a stat per note on fs). */
    async stats(spaceId: string) {
      const notes: Array<{ key: string; size: number | undefined; stamp: string }> = [];
      for await (const object of listAll(storage, spaceKeys(spaceId).live)) {
        const name = parseNoteName(baseName(object.key));
        if (name) notes.push({ key: object.key, size: object.size, stamp: name.stamp });
      }
      const sizes = await mapLimit(notes, storage.parallelism, async (note) => note.size ?? (await storage.stat(note.key))?.size ?? 0);
      const stamps = notes.map((note) => note.stamp).sort();
      return {
        notes_count: notes.length,
        total_size: sizes.reduce((sum, size) => sum + size, 0),
        oldest_note: stamps.length > 0 ? stampToIso(stamps[0] as string) : null,
        newest_note: stamps.length > 0 ? stampToIso(stamps[stamps.length - 1] as string) : null,
      };
    },
  };
}

export type NoteService = ReturnType<typeof createNoteService>;
