import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { objectTooLarge, readLimit } from '../object-size.js';
import type { GetOptions, StoredObject } from '../types.js';
import { isNotFound, storageError } from './errors.js';
import { md5Hex, unquote } from './etag.js';
import type { S3Store } from './s3-store.js';

/** Reads on S3: `get` (GetObject, refused unread past the size limit) and `stat` (HeadObject). */

/**
 * A response body in one Buffer, each byte copied once: into a buffer of the announced length when
 * there is one. The SDK's transformToByteArray gathers the chunks, joins them into a Uint8Array, and
 * a Buffer.from of that copied it a third time (three copies of a 140 MB snapshot at 1M notes, as
 * the first search of a process waits). A body shorter or longer than announced is an error, not a
 * short object.
 */
async function readBody(stream: AsyncIterable<Uint8Array> | undefined, announced: number | undefined): Promise<Buffer> {
  if (stream === undefined) return Buffer.alloc(0);
  if (announced === undefined) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
  const body = Buffer.allocUnsafe(announced);
  let filled = 0;
  for await (const chunk of stream) {
    if (filled + chunk.length > announced) throw new Error(`the body is longer than its Content-Length (${announced} bytes)`);
    body.set(chunk, filled);
    filled += chunk.length;
  }
  if (filled !== announced) throw new Error(`the body ended after ${filled} of its ${announced} bytes`);
  return body;
}

/** An object's version, size and date by its full key (prefix included), or null if there is none. */
export async function headObject(store: S3Store, full: string): Promise<{ etag: string; size: number; lastModified: Date } | null> {
  try {
    const res = await store.client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: full }));
    return { etag: unquote(res.ETag) ?? '', size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw storageError(store, 'stat', store.strip(full), error);
  }
}

/** StorageDriver.get. */
export async function getObject(store: S3Store, key: string, options: GetOptions = {}): Promise<StoredObject | null> {
  const full = store.fullKey(key);
  const limit = readLimit(options.maxBytes);
  try {
    const res = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: full }));
    if ((res.ContentLength ?? 0) > limit) {
      (res.Body as { destroy?: () => void } | undefined)?.destroy?.(); // not one byte of it read
      throw objectTooLarge(key, res.ContentLength ?? 0, limit);
    }
    const body = await readBody(res.Body as AsyncIterable<Uint8Array> | undefined, res.ContentLength);
    return { key, body, size: body.length, lastModified: res.LastModified ?? new Date(0), etag: unquote(res.ETag) ?? md5Hex(body) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw storageError(store, 'get', key, error);
  }
}
