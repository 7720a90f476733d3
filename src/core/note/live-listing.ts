/**
 * The names of a space's live notes, from live/'s listing, parsed once per key. Its own module
 * because a busy live/ is listed on every read, and reusing what the last listing parsed (and the
 * same array, when nothing changed) is what keeps that cheap.
 */
import type { StorageDriver } from '../../storage/types.js';
import { listKeys } from '../../storage/list.js';
import { spaceKeys } from '../layout.js';
import { parseNoteName, sortOldestFirst, type NoteName } from '../note-name.js';

/** The live/ listings of one process (one corpus). */
export function createLiveListings(storage: StorageDriver) {
  /**
   * Per space, live/'s last listing as read: its keys (in key order), their names alike, and those
   * names oldest first. While live/ changes its version vouches for nothing (fs: for a couple of
   * seconds after each note), so each read lists it again: the same keys give back the same names
   * (the same array: readers keyed on it skip their work), new keys alone are parsed.
   */
  const liveListings = new Map<string, { keys: string[]; byKey: Array<NoteName | null>; names: NoteName[] }>();
  /** Live note names of a space, oldest first. */
  const names = async (spaceId: string): Promise<NoteName[]> => {
    const live = spaceKeys(spaceId).live;
    const keys = await listKeys(storage, live);
    const last = liveListings.get(spaceId);
    if (last && sameStrings(last.keys, keys)) return last.names;
    const byKey = new Array<NoteName | null>(keys.length);
    for (let i = 0, j = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (last) {
        while (j < last.keys.length && (last.keys[j] as string) < key) j++;
        if (last.keys[j] === key) {
          byKey[i] = last.byKey[j] as NoteName | null;
          continue;
        }
      }
      byKey[i] = parseNoteName(key.slice(live.length));
    }
    const names = sortOldestFirst(byKey.filter((name): name is NoteName => name !== null));
    liveListings.set(spaceId, { keys, byKey, names });
    return names;
  };

  return {
    names,
    /** Forgets a space's last listing. */
    release: (spaceId: string): void => {
      liveListings.delete(spaceId);
    },
  };
}

/** Two string lists equal, entry for entry. */
function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
