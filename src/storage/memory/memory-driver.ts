import { createHash } from 'node:crypto';
import { LiveMemError } from '../../shared/errors.js';
import { normalizeKey, normalizePrefix } from '../../shared/keys.js';
import { objectTooLarge, readLimit } from '../object-size.js';
import type { ListOptions, ListPage, ObjectInfo, PutOptions, StorageDriver, StoredObject } from '../types.js';
import { sortKeys } from '../key-order.js';
import { paginate } from '../list.js';

interface Entry {
  body: Buffer;
  etag: string;
  lastModified: Date;
}

/** An in-process store for tests: same contract, no I/O; folders exist while they hold an object, as on fs. */
export function createMemoryDriver(clock: () => Date = () => new Date()): StorageDriver {
  const entries = new Map<string, Entry>();
  let version = 0;

  /** Folders exist while they hold an object, as on fs, where empty folders are pruned. */
  const hasFolder = (folder: string): boolean => {
    for (const key of entries.keys()) if (key.startsWith(folder)) return true;
    return false;
  };

  const info = (key: string, entry: Entry): ObjectInfo => ({
    key,
    size: entry.body.length,
    lastModified: entry.lastModified,
    etag: entry.etag,
  });

  return {
    name: 'memory',
    location: 'memory',
    parallelism: 16,

    async get(key, options = {}): Promise<StoredObject | null> {
      const entry = entries.get(normalizeKey(key));
      if (!entry) return null;
      const limit = readLimit(options.maxBytes);
      if (entry.body.length > limit) throw objectTooLarge(key, entry.body.length, limit);
      return { key, body: Buffer.from(entry.body), size: entry.body.length, lastModified: entry.lastModified, etag: entry.etag };
    },

    async stat(key) {
      const entry = entries.get(normalizeKey(key));
      return entry ? info(key, entry) : null;
    },

    async put(key, body, options: PutOptions = {}) {
      normalizeKey(key);
      if (options.inExistingFolder && options.ifNoneMatch === '*' && !hasFolder(key.slice(0, key.lastIndexOf('/') + 1))) {
        throw new LiveMemError('not_found', `the folder of ${key} does not exist`, { key });
      }
      const current = entries.get(key);
      if (options.ifNoneMatch === '*' && current) {
        throw new LiveMemError('precondition_failed', `${key} already exists`, { key });
      }
      if (options.ifMatch !== undefined && current?.etag !== options.ifMatch) {
        throw new LiveMemError('precondition_failed', `${key} changed since it was read`, { key });
      }
      const bytes = Buffer.from(body);
      const etag = `${createHash('md5').update(bytes).digest('hex')}-${++version}`;
      entries.set(key, { body: bytes, etag, lastModified: clock() });
      return { etag };
    },

    async list(prefix, options: ListOptions = {}): Promise<ListPage> {
      const normalized = normalizePrefix(prefix);
      const keys = sortKeys([...entries.keys()].filter((key) => key.startsWith(normalized)));
      return paginate(keys, normalized, options, (key) => info(key, entries.get(key) as Entry));
    },

    async delete(key) {
      entries.delete(normalizeKey(key));
    },

    async deleteMany(keys) {
      for (const key of keys) entries.delete(normalizeKey(key));
    },

    async removeFolder(prefix) {
      const folder = normalizePrefix(prefix);
      const keys = [...entries.keys()].filter((key) => key.startsWith(folder));
      for (const key of keys) entries.delete(key);
      return keys.length;
    },
  };
}
