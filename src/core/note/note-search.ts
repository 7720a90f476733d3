/**
 * `live_search`: the newest live notes whose text holds a query. Its own module because it reads as
 * little as it can (the search index's known texts decide which bodies to read, in batches) while
 * still checking every answer on the note's body.
 */
import { mapLimit } from '../../shared/concurrency.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { requireSpace } from '../space-meta.js';
import { validateLimit, validateQuery, validateSpaceId } from '../validate.js';
import type { NoteName } from '../note-name.js';
import type { Corpus } from './corpus.js';
import { MAX_READ_LIMIT, type NoteSearchInput } from './note-inputs.js';
import { type LiveTextsLookup, matchesNeedle, searchableTexts } from './note-text.js';
import type { NoteView } from './note-view.js';

/** What live_search knows of a space's live notes without reading them (recall's `liveTexts`). */
export type LiveTextsOf = (spaceId: string) => Promise<LiveTextsLookup>;

const NO_TEXTS: LiveTextsLookup = { matcher: () => () => 'unknown', remember: () => undefined };

/** The notes of `input.space_id` that match `input.query`, newest first, at most `input.limit`. */
export async function searchNotes(context: CoreContext, corpus: Corpus, liveTextsOf: LiveTextsOf | undefined, caller: Caller, input: NoteSearchInput) {
  const { storage } = context;
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
}
