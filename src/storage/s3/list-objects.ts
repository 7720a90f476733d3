import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { normalizePrefix } from '../../shared/keys.js';
import type { ListOptions, ListPage, ObjectInfo } from '../types.js';
import { storageError } from './errors.js';
import { unquote } from './etag.js';
import type { S3Store } from './s3-store.js';

/** `list` on S3: one ListObjectsV2 page, the driver's prefix added to the request and stripped from the answer. */

/** ListObjectsV2 returns at most this many keys per page. */
const S3_MAX_KEYS = 1000;

export async function listObjects(store: S3Store, prefix: string, options: ListOptions = {}): Promise<ListPage> {
  const { root, strip } = store;
  const normalized = normalizePrefix(prefix);
  const limit = Math.min(S3_MAX_KEYS, Math.max(1, Math.floor(options.limit ?? S3_MAX_KEYS)));
  try {
    const res = await store.client.send(
      new ListObjectsV2Command({
        Bucket: store.bucket,
        Prefix: root + normalized,
        MaxKeys: limit,
        ...(options.delimiter !== undefined ? { Delimiter: options.delimiter } : {}),
        ...(options.cursor !== undefined ? { ContinuationToken: options.cursor } : {}),
        ...(options.startAfter !== undefined ? { StartAfter: root + options.startAfter } : {}),
      }),
    );
    const objects: ObjectInfo[] = (res.Contents ?? []).flatMap((o) =>
      o.Key === undefined ? [] : [{ key: strip(o.Key), size: o.Size, lastModified: o.LastModified, etag: unquote(o.ETag) }],
    );
    const prefixes = (res.CommonPrefixes ?? []).flatMap((p) => (p.Prefix === undefined ? [] : [strip(p.Prefix)]));
    const cursor = res.IsTruncated ? res.NextContinuationToken : undefined;
    return cursor === undefined ? { objects, prefixes } : { objects, prefixes, cursor };
  } catch (error) {
    throw storageError(store, 'list', normalized, error);
  }
}
