import { DeleteObjectCommand, DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { LiveMemError } from '../../shared/errors.js';
import { isNotFound, storageError } from './errors.js';
import type { S3Store } from './s3-store.js';

/** Deletes on S3: one DeleteObject for `delete`, DeleteObjects by batches of 1000 for `deleteMany`; a missing key is no error. */

/** DeleteObjects takes at most this many keys per request. */
const S3_MAX_DELETE = 1000;

export async function deleteObject(store: S3Store, key: string): Promise<void> {
  const full = store.fullKey(key);
  try {
    await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: full }));
  } catch (error) {
    if (isNotFound(error)) return;
    throw storageError(store, 'delete', key, error);
  }
}

export async function deleteObjects(store: S3Store, keys: readonly string[]): Promise<void> {
  const { bucket } = store;
  const fulls = [...new Set(keys.map(store.fullKey))]; // every key validated before any request
  for (let start = 0; start < fulls.length; start += S3_MAX_DELETE) {
    const batch = fulls.slice(start, start + S3_MAX_DELETE);
    let errors: { Key?: string; Code?: string; Message?: string }[];
    try {
      // Quiet only drops the per-key successes from the reply; failures are still listed in Errors.
      const res = await store.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      errors = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
    } catch (error) {
      throw storageError(store, `deleteMany (${batch.length} keys)`, undefined, error);
    }
    if (errors.length > 0) {
      const failures = errors.map((e) => ({ key: store.strip(e.Key ?? '?'), code: e.Code, message: e.Message }));
      const shown = failures
        .slice(0, 10)
        .map((f) => `${f.key} (${f.code ?? 'error'}: ${f.message ?? ''})`)
        .join(', ');
      throw new LiveMemError(
        'storage_error',
        `S3 deleteMany failed for ${failures.length} of ${batch.length} keys in ${store.location}: ${shown}${failures.length > 10 ? ', …' : ''}`,
        { failures, bucket },
      );
    }
  }
}
