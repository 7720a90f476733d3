import type { ObjectInfo, StorageDriver } from '../types.js';
import { deleteObject, deleteObjects } from './delete-objects.js';
import { getObject, headObject } from './get-object.js';
import { listObjects } from './list-objects.js';
import { type ConditionalWriteSupport, createObjectWriter } from './put-object.js';
import { createS3Store, type S3DriverOptions } from './s3-store.js';

/**
 * The S3 driver. This folder holds the only modules that import @aws-sdk/*; the app loads this one
 * with a dynamic import() so the default (fs) path never pays for the SDK.
 *
 * Locking rests on conditional writes (If-None-Match: '*' and If-Match). Some S3-compatible stores
 * accept those headers and ignore them, which would silently break every lock, so the first
 * conditional put of a driver's life is preceded by a probe (see checkConditionalWrites).
 *
 * This factory composes the operations of its sibling modules over one S3Store (s3-store.ts: the
 * options, the prefix, the SDK clients): reads (get-object.ts), writes and the probe (put-object.ts),
 * listings (list-objects.ts) and deletes (delete-objects.ts); errors.ts says what a failure was.
 */

export type { ConditionalWriteSupport } from './put-object.js';
export type { S3DriverOptions } from './s3-store.js';

export interface S3StorageDriver extends StorageDriver {
  readonly name: 's3';
  /** Probes (once per driver, memoised) whether the store honours If-None-Match. */
  checkConditionalWrites(): Promise<ConditionalWriteSupport>;
  /** Destroys the SDK clients and their sockets. */
  close(): Promise<void>;
}

/** The probe for any driver: fs and memory always honour conditional writes. */
export async function probeConditionalWrites(driver: StorageDriver): Promise<ConditionalWriteSupport> {
  const check = (driver as Partial<S3StorageDriver>).checkConditionalWrites;
  return typeof check === 'function' ? check.call(driver) : 'supported';
}

export function createS3Driver(options: S3DriverOptions): S3StorageDriver {
  const store = createS3Store(options);
  const writer = createObjectWriter(store);

  return {
    name: 's3',
    location: store.location,
    parallelism: store.maxSockets,
    checkConditionalWrites: writer.checkConditionalWrites,

    get: (key, options) => getObject(store, key, options),

    async stat(key): Promise<ObjectInfo | null> {
      const found = await headObject(store, store.fullKey(key));
      return found ? { key, ...found } : null;
    },

    put: writer.put,
    list: (prefix, options) => listObjects(store, prefix, options),
    delete: (key) => deleteObject(store, key),
    deleteMany: (keys) => deleteObjects(store, keys),

    async close() {
      store.close();
    },
  };
}
