import type { ObjectInfo, StorageDriver } from '../storage/types.js';

/**
 * Stats that are fresh, yet shared by concurrent callers: `freshStat(key)` answers with a stat of
 * `key` that started after the call was made, so whatever was written or deleted before the call is
 * seen (a revoked token, a deleted space). A call arriving while a stat of the same key is under way
 * cannot join it (it may have started before a change) and waits for the next one, which serves
 * every call that arrived meanwhile: with 50 requests at once, a couple of stats rather than 50.
 * Nothing is cached once a stat answered; a key with nothing in flight holds no memory.
 */
export function createFreshStat(storage: StorageDriver): (key: string) => Promise<ObjectInfo | null> {
  const running = new Map<string, Promise<ObjectInfo | null>>();
  const queued = new Map<string, Promise<ObjectInfo | null>>();
  const freshStat = (key: string): Promise<ObjectInfo | null> => {
    const current = running.get(key);
    if (!current) {
      const started: Promise<ObjectInfo | null> = storage.stat(key).finally(() => {
        if (running.get(key) === started) running.delete(key);
      });
      running.set(key, started);
      return started;
    }
    let next = queued.get(key);
    if (!next) {
      // Runs after `current` settled and left `running` (its `finally` came first): one new stat for all waiting.
      next = current
        .catch(() => undefined)
        .then(() => {
          queued.delete(key);
          return freshStat(key);
        });
      queued.set(key, next);
    }
    return next;
  };
  return freshStat;
}
