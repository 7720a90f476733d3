import type { StorageDriver } from '../../src/storage/types.js';

/**
 * A driver that records the key of every `get` and the prefix of every `list`: which objects a
 * process read. With `versions`, folders say they never change (so the core's listing cache holds).
 */
export function recordingDriver(driver: StorageDriver, options: { versions?: boolean } = {}): StorageDriver & { gets: string[]; lists: string[] } {
  const gets: string[] = [];
  const lists: string[] = [];
  return Object.assign(Object.create(driver) as StorageDriver, {
    gets,
    lists,
    get: (key: string, ...rest: unknown[]) => {
      gets.push(key);
      return (driver.get as (...a: unknown[]) => unknown).call(driver, key, ...rest);
    },
    list: (prefix: string, ...rest: unknown[]) => {
      lists.push(prefix);
      return (driver.list as (...a: unknown[]) => unknown).call(driver, prefix, ...rest);
    },
    ...(options.versions ? { version: async () => 'unchanged' } : {}),
  }) as StorageDriver & { gets: string[]; lists: string[] };
}
