/**
 * How a note file is created without reading the space's meta each time, yet never left in a space
 * that another process deleted. Its own module because the reasoning (folders on fs, a trust window on
 * S3) is subtle and belongs with the one map it guards; `live_note` and `live-mem ingest` both write
 * through it.
 */
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';

/** Writes a new note (create-only) at `key` of `spaceId`; `not_found` if the space does not exist. */
export type CreateNote = (spaceId: string, key: string, body: Buffer | string) => Promise<void>;

/** This process's note creator, with its own memory of the spaces it has seen exist. */
export function noteCreator(context: CoreContext): CreateNote {
  const { storage, limits } = context;
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

  const NOTE_TYPE = 'text/markdown; charset=utf-8';
  const INTO_KNOWN_FOLDER = { ifNoneMatch: '*', contentType: NOTE_TYPE, inExistingFolder: true } as const;
  const notFound = (spaceId: string) => new LiveMemError('not_found', `space '${spaceId}' does not exist`, { space_id: spaceId });

  return async (spaceId: string, key: string, body: Buffer | string): Promise<void> => {
    if (storage.removeFolder) {
      if (knownSpaces.has(spaceId)) {
        try {
          await storage.put(key, body, INTO_KNOWN_FOLDER);
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
}
