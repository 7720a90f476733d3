/**
 * Folder listings kept while the driver's folder version vouches for them: whole listings (a space's
 * history, bank, summaries, live/) and windows of one (newest.ts). Its own module because it is one
 * mechanism, version in, listing out, that the corpus lends to every reader of a space's folders.
 */
import type { StorageDriver } from '../../storage/types.js';

/** The listing caches of one process (one corpus). */
export function createListingCache(storage: StorageDriver) {
  const listings = new Map<string, { version: string; value: unknown }>();

  /**
   * A folder's listing, re-read only when the driver's folder version says it changed (or cannot
   * say). The version is taken before listing, so a change during the listing shows next time.
   */
  const cachedListing = async <T>(folder: string, list: () => Promise<T>): Promise<T> => {
    const version = (await storage.version?.(folder)) ?? null;
    const cached = listings.get(folder);
    if (version !== null && cached?.version === version) return cached.value as T;
    const value = await list();
    if (version === null) listings.delete(folder);
    else listings.set(folder, { version, value });
    return value;
  };

  /** The version `value` was listed at, while it is still the one cached for `folder` (none: re-read each time). */
  const listingVersion = (folder: string, value: unknown): string | undefined => {
    const cached = listings.get(folder);
    return cached && cached.value === value ? cached.version : undefined;
  };

  /**
   * A listing another process read at `version` (a texts file says so), taken as this process's own
   * when it has none: cachedListing then uses it for as long as the folder is still at that version.
   */
  const primeListing = (folder: string, version: string, value: unknown): void => {
    if (!listings.has(folder)) listings.set(folder, { version, value });
  };

  const windows = new Map<string, { version: string; bounds: string; value: unknown }>();
  /**
   * A part of a folder's listing (`bounds` says which: a newest-first window, newest.ts), kept in
   * `slot` and re-read only when the folder's version or the bounds changed: one slot per window,
   * so a long-lived process keeps a few per space.
   */
  const windowListing = async <T>(folder: string, slot: string, bounds: string, list: () => Promise<T>): Promise<T> => {
    const version = (await storage.version?.(folder)) ?? null;
    const key = `${folder}\0${slot}`;
    const cached = windows.get(key);
    if (version !== null && cached?.version === version && cached.bounds === bounds) return cached.value as T;
    const value = await list();
    if (version === null) windows.delete(key);
    else windows.set(key, { version, bounds, value });
    return value;
  };

  /** Forgets every listing under `root` (a space's folder): read again when next asked. */
  const release = (root: string): void => {
    for (const folder of [...listings.keys()]) if (folder.startsWith(root)) listings.delete(folder);
    for (const key of [...windows.keys()]) if (key.startsWith(root)) windows.delete(key);
  };

  return { cachedListing, listingVersion, primeListing, windowListing, release };
}
