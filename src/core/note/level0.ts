/**
 * Level 0 of recall: every note of a space, live or consolidated, listed oldest first and read with
 * its text. Its own module because it is what recall and consolidation build on, while the corpus
 * (corpus.ts) is only the caches it reads through.
 */
import { mapLimit } from '../../shared/concurrency.js';
import type { HistoryRecord } from '../commit/history-record.js';
import { compareNewestFirst, type NoteName, parseNoteName } from '../note-name.js';
import type { NoteView } from './note-view.js';

/** A note of level 0, without its text. */
export interface Level0Note extends NoteName {
  source: 'live' | 'history';
  /** For history notes: the consolidation that moved it out of live/. */
  consolidation_id?: string;
}

export interface Level0Text extends Level0Note, NoteView {}

/** Oldest first, the order of level 0. */
export const compareOldestFirst = (a: NoteName, b: NoteName): number => compareNewestFirst(b, a);

/** What level 0 is read from: the corpus's own readers (corpus.ts). */
export interface Level0Sources {
  history(spaceId: string): Promise<HistoryRecord[]>;
  liveNames(spaceId: string): Promise<NoteName[]>;
  liveNote(spaceId: string, name: NoteName): Promise<NoteView | null>;
  historyNote(spaceId: string, cid: string, filename: string): Promise<Level0Text | null>;
  skipDamaged<T>(what: string, error: unknown, fallback: T): T;
}

/**
 * Every note of the space, oldest first, without its text. A note found both in live/ and in a
 * complete consolidation (a consolidation cut between its record and the removal from live/)
 * is listed once, as history.
 */
export async function listLevel0(sources: Level0Sources, spaceId: string): Promise<Level0Note[]> {
  const [history, live] = await Promise.all([sources.history(spaceId), sources.liveNames(spaceId)]);
  const notes: Level0Note[] = [];
  const seen = new Set<string>();
  for (const record of history) {
    for (const filename of record.notes) {
      const name = parseNoteName(filename);
      if (!name || seen.has(filename)) continue;
      seen.add(filename);
      notes.push({ ...name, source: 'history', consolidation_id: record.id });
    }
  }
  for (const name of live) if (!seen.has(name.filename)) notes.push({ ...name, source: 'live' });
  return notes.sort(compareOldestFirst);
}

/**
 * The text of level-0 notes, in the order given; a live note consolidated since it was listed
 * is looked up in history, and one found nowhere is left out.
 */
export async function readLevel0(sources: Level0Sources, parallelism: number, spaceId: string, notes: readonly Level0Note[]): Promise<Level0Text[]> {
  let movedOn: Promise<Map<string, string>> | undefined; // filename → consolidation, read once if needed
  const texts = await mapLimit(notes, parallelism, async (note): Promise<Level0Text | null> => {
    if (note.consolidation_id) {
      return sources.historyNote(spaceId, note.consolidation_id, note.filename).catch((error: unknown) => sources.skipDamaged('recall', error, null));
    }
    const view = await sources.liveNote(spaceId, note);
    if (view) return { ...note, ...view };
    // Consolidated since it was listed: find which consolidation took it.
    movedOn ??= sources
      .history(spaceId)
      .then((records) => new Map(records.flatMap((record) => record.notes.map((filename) => [filename, record.id] as const))));
    const cid = (await movedOn).get(note.filename);
    return cid ? sources.historyNote(spaceId, cid, note.filename).catch((error: unknown) => sources.skipDamaged('recall', error, null)) : null;
  });
  return texts.filter((text): text is Level0Text => text !== null);
}
