import { ownerCaller } from '../../src/core/caller.js';
import { createCore, type Core } from '../../src/core/core.js';
import type { Limits } from '../../src/core/context.js';
import { decodeHistoryNotes } from '../../src/core/commit/history.js';
import { spaceChanges } from '../../src/core/layout.js';
import { listKeys } from '../../src/storage/list.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';

const CHANGE_MARKERS = spaceChanges('').slice(0, -'.json'.length);

/**
 * A driver wrapper that counts calls per method: proves how much I/O an operation does. The change
 * markers a store of objects gets (core/feed/change-marker.ts: written beside a write, not awaited by
 * it) are not counted; test/core/change-feed.test.ts counts them.
 */
export function counting(driver: StorageDriver): StorageDriver & { counts: Record<string, number>; reset(): void } {
  const counts: Record<string, number> = {};
  const wrapped = { counts, reset: () => Object.keys(counts).forEach((k) => delete counts[k]) } as StorageDriver & {
    counts: Record<string, number>;
    reset(): void;
  };
  for (const key of ['get', 'stat', 'put', 'list', 'delete', 'deleteMany'] as const) {
    (wrapped as unknown as Record<string, unknown>)[key] = (...args: unknown[]) => {
      if (!(key === 'put' && String(args[0]).startsWith(CHANGE_MARKERS))) counts[key] = (counts[key] ?? 0) + 1;
      return (driver[key] as (...a: unknown[]) => unknown).apply(driver, args);
    };
  }
  if (driver.removeFolder) {
    const removeFolder = driver.removeFolder.bind(driver);
    wrapped.removeFolder = (prefix) => {
      counts.removeFolder = (counts.removeFolder ?? 0) + 1;
      return removeFolder(prefix);
    };
  }
  Object.assign(wrapped, { name: driver.name, location: driver.location, parallelism: driver.parallelism });
  return wrapped;
}

/** A controllable clock: starts at `start`, moves by `step` ms on each read. */
export function steppingClock(start = '2026-02-20T18:00:00.000Z', step = 1000) {
  let now = Date.parse(start);
  const clock = () => {
    const date = new Date(now);
    now += step;
    return date;
  };
  clock.set = (iso: string) => {
    now = Date.parse(iso);
  };
  return clock;
}

export function makeCore(options: { storage?: StorageDriver; clock?: () => Date; limits?: Partial<Limits> } = {}): { core: Core; storage: StorageDriver } {
  const storage = options.storage ?? createMemoryDriver();
  let n = 0;
  const core = createCore({
    storage,
    ...(options.clock ? { clock: options.clock } : {}),
    randomId: () => (n++).toString(36).padStart(6, '0'),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  return { core, storage };
}

export const owner = ownerCaller('tester');

/** The file names of every note a space's consolidations moved into history, in the order they were moved. */
export async function historyNoteNames(storage: StorageDriver, spaceId: string): Promise<string[]> {
  const files = (await listKeys(storage, `${spaceId}/history/`)).filter((key) => key.endsWith('/notes.json'));
  const names: string[] = [];
  for (const key of files) names.push(...decodeHistoryNotes((await storage.get(key))!.body, key).map((note) => note.filename));
  return names;
}
