/**
 * The count, size and time range of a space's live notes, as space_info shows them. Its own module:
 * it lists the folder itself (not the corpus cache) because it needs sizes.
 */
import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { StorageDriver } from '../../storage/types.js';
import { baseName, spaceKeys } from '../layout.js';
import { parseNoteName, stampToIso } from '../note-name.js';

/** Count, total size and time range of a space's live notes (sizes cost a stat per note on fs). */
export async function liveNoteStats(storage: StorageDriver, spaceId: string) {
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
}
