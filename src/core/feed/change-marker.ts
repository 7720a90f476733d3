import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/log.js';
import type { StorageDriver, WriteBatch } from '../../storage/types.js';
import { STORE_CHANGES, spaceChanges, spaceKeys } from '../layout.js';

/**
 * The change markers writers keep on a store of objects without folders nor folder versions (S3), so
 * that a watcher's idle check is one request — a HEAD of the space's marker — instead of listings
 * (space-probe.ts): after anything a watcher is told of is written — a live note, a history entry, a
 * bank file, the synthesis, the rules, the space's meta — its space's marker
 * (`_system/changes/{space}.json`, outside the space's folder; and for a meta the store's,
 * `_system/changes.json`) is rewritten. One mechanism for every writer of the core: the store it is
 * given is wrapped, so nothing that writes needs to know. A store with folders (fs, memory) is not:
 * fs has folder versions, and a listing of the memory driver costs no request.
 *
 * A marker is written after the write it marks and not awaited by it: a note's write costs no more
 * time, and one more PUT (writes of one space while its marker is being written are folded into one
 * more marker write, so a burst costs two). A marker that never comes (the process died first, a
 * writer of an older release or the Python server) only delays: watchers list the space anyway at
 * least once a minute. Markers are store state, outside every space: never exported nor backed up.
 */

/**
 * The markers a write of `key` touches: its space's for what a watcher is told of, and the store's for a
 * space's meta (a space made). A deletion touches only the store's, for a meta (a space removed): what
 * else is deleted goes with a history entry that is written (a commit), or with the space itself — whose
 * marker goes too, which its watchers see — and a marker written after its space's last object would
 * leave the space's folder behind on S3.
 */
/** What of a space's folder a write is marked for, by its name there (layout.ts, read once: no key built per write). */
const MARKED = (() => {
  const keys = spaceKeys('_');
  const inSpace = (key: string) => key.slice(keys.root.length);
  return {
    meta: inSpace(keys.meta),
    files: new Set([inSpace(keys.synthesis), inSpace(keys.rules)]),
    folders: [keys.live, keys.history, keys.bank].map(inSpace),
  };
})();

export function markersOf(key: string, deleted = false): string[] {
  const slash = key.indexOf('/');
  if (slash <= 0 || key.startsWith('_')) return [];
  const inSpace = key.slice(slash + 1);
  if (inSpace === MARKED.meta || (deleted && inSpace === '')) return deleted ? [STORE_CHANGES] : [spaceChanges(key.slice(0, slash)), STORE_CHANGES];
  if (deleted) return [];
  return MARKED.files.has(inSpace) || MARKED.folders.some((folder) => inSpace.startsWith(folder)) ? [spaceChanges(key.slice(0, slash))] : [];
}

/** Whether writes to `storage` keep change markers, and watchers read them: a store with neither folders nor folder versions (S3). */
export const keepsMarkers = (storage: StorageDriver): boolean => !storage.version && !storage.removeFolder;

/** `storage`, its writes marked; a store with folders or folder versions needs no markers: it is returned as it is. */
export function withChangeMarkers(storage: StorageDriver, logger: Logger): StorageDriver {
  if (!keepsMarkers(storage)) return storage;
  /** Per marker: the write in flight, and whether another is owed once it lands. */
  const writing = new Map<string, { owed: boolean; done: Promise<void> }>();
  let count = 0;

  const write = (marker: string): Promise<void> =>
    // A new body each time (S3's etag is its MD5): this process and its count.
    storage.put(marker, `${JSON.stringify({ pid: process.pid, n: ++count, id: randomUUID() })}\n`, { contentType: 'application/json' }).then(
      () => undefined,
      (error: unknown) => logger.debug(`could not write the change marker ${marker}: watchers see the change at their next listing`, { error: String(error) }),
    );

  const touch = (marker: string): void => {
    const current = writing.get(marker);
    if (current) {
      current.owed = true;
      return;
    }
    const entry = { owed: false, done: Promise.resolve() };
    const run = async () => {
      do {
        entry.owed = false;
        await write(marker);
      } while (entry.owed);
      writing.delete(marker);
    };
    entry.done = run();
    writing.set(marker, entry);
  };
  const mark = (keys: readonly string[], deleted = false) => {
    for (const marker of new Set(keys.flatMap((key) => markersOf(key, deleted)))) touch(marker);
  };

  const marked: StorageDriver = Object.create(storage) as StorageDriver;
  return Object.assign(marked, {
    put: async (key: string, body: Buffer | string, options?: Parameters<StorageDriver['put']>[2]) => {
      const result = await storage.put(key, body, options);
      mark([key]);
      return result;
    },
    delete: async (key: string) => {
      await storage.delete(key);
      mark([key], true);
    },
    deleteMany: async (keys: readonly string[]) => {
      await storage.deleteMany(keys);
      mark(keys, true);
    },
    ...(storage.batch
      ? {
          batch: (): WriteBatch => {
            const inner = (storage.batch as () => WriteBatch)();
            const keys: string[] = [];
            return {
              put: (key, body, options) => {
                keys.push(key);
                return inner.put(key, body, options);
              },
              flush: async () => {
                await inner.flush();
                mark(keys.splice(0));
              },
            };
          },
        }
      : {}),
    /** Closes the store once the markers owed are written. */
    close: async () => {
      while (writing.size > 0) await Promise.all([...writing.values()].map((entry) => entry.done));
      await storage.close?.();
    },
  });
}
