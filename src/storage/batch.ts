import type { StorageDriver, WriteBatch } from './types.js';

/**
 * A write batch on `storage`: the driver's own when it has a cheaper one, else plain puts (each
 * already durable on return, so `flush` has nothing left to do).
 */
export function openBatch(storage: StorageDriver): WriteBatch {
  return (
    storage.batch?.() ?? {
      put: async (key, body, options) => void (await storage.put(key, body, options)),
      flush: async () => undefined,
    }
  );
}
