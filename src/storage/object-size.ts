import { isLiveMemError, LiveMemError } from '../shared/errors.js';

/**
 * The largest object a driver reads (types.ts, `get`): 2 GiB, far above any object live-mem writes.
 * The biggest it writes are search index snapshots, about 140 bytes a note and its vector (1.5 KB at
 * 384 dimensions): a million notes, 1.6 GB. A note or a bank file is what a caller sent, megabytes at
 * most. A bigger file is no object of live-mem's (planted, or a disk image copied into the store): read
 * whole, it would take that much memory at once, or fail on every read of the folder it sits in.
 */
export const MAX_OBJECT_BYTES = 2 * 1024 * 1024 * 1024;

/** The most `get` reads of one object: MAX_OBJECT_BYTES, or less when the caller says so. */
export const readLimit = (maxBytes: number | undefined): number => Math.min(maxBytes ?? MAX_OBJECT_BYTES, MAX_OBJECT_BYTES);

/** The error `get` throws for an object larger than `limit` (readLimit): nothing of it was read. */
export function objectTooLarge(key: string, size: number, limit: number): LiveMemError {
  return new LiveMemError('storage_error', `${key} is ${size} bytes, larger than any such object live-mem writes (${limit}): not read`, {
    key,
    size,
    max_bytes: limit,
    too_large: true,
  });
}

export const isObjectTooLarge = (error: unknown): boolean => isLiveMemError(error, 'storage_error') && error.data.too_large === true;
