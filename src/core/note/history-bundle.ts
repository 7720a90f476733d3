/**
 * A consolidation's notes.json decoded: its notes' names oldest first, and each note's view parsed
 * only when asked (a recall reads a few notes of a bundle of hundreds). Its own module so that the
 * corpus keeps only the caching of bundles, not their decoding.
 */
import type { StorageDriver } from '../../storage/types.js';
import { decodeHistoryNotes } from '../commit/history.js';
import { spaceKeys } from '../layout.js';
import { type NoteName, parseNoteName } from '../note-name.js';
import { compareOldestFirst, type Level0Text } from './level0.js';
import { toNoteView } from './note-view.js';

export interface HistoryBundle {
  /** Filenames, oldest first. */
  order: string[];
  view(filename: string): Level0Text | null;
}

/**
 * Reads consolidation `cid`'s notes.json, leaving out the notes `isForgotten` names; `bytes` is its
 * size, or null when it is missing (a consolidation being written: not to be cached).
 */
export async function readHistoryBundle(
  storage: StorageDriver,
  spaceId: string,
  cid: string,
  isForgotten: (filename: string) => boolean,
): Promise<{ bundle: HistoryBundle; bytes: number | null }> {
  const key = spaceKeys(spaceId).historyNotes(cid);
  const object = await storage.get(key);
  const bodies = new Map<string, { name: NoteName; body: Buffer }>();
  for (const { filename, body } of object ? decodeHistoryNotes(object.body, key) : []) {
    const name = parseNoteName(filename);
    if (name && !isForgotten(filename)) bodies.set(filename, { name, body });
  }
  const views = new Map<string, Level0Text>();
  const bundle: HistoryBundle = {
    order: [...bodies.values()]
      .map((entry) => entry.name)
      .sort(compareOldestFirst)
      .map((name) => name.filename),
    view(filename) {
      let view = views.get(filename);
      const entry = bodies.get(filename);
      if (!view && entry) {
        view = { ...entry.name, ...toNoteView(entry.name, entry.body), source: 'history', consolidation_id: cid };
        views.set(filename, view);
      }
      return view ?? null;
    },
  };
  return { bundle, bytes: object ? object.body.length : null };
}
