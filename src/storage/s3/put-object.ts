import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { PutObjectCommandInput } from '@aws-sdk/client-s3';
import { LiveMemError } from '../../shared/errors.js';
import type { PutOptions } from '../types.js';
import { isDoubtful, isNotFound, isPreconditionFailure, storageError } from './errors.js';
import { md5Hex, unquote } from './etag.js';
import { headObject } from './get-object.js';
import type { S3Store } from './s3-store.js';

/**
 * Writes on S3: plain puts, and conditional ones (If-None-Match: '*' and If-Match), on which every
 * lock rests. Some S3-compatible stores accept those headers and ignore them, which would silently
 * break every lock, so the first conditional put of a driver's life is preceded by a probe
 * (checkConditionalWrites), memoised once it answers.
 */

export type ConditionalWriteSupport = 'supported' | 'unsupported';

export interface ObjectWriter {
  /** Probes (once per driver, memoised) whether the store honours If-None-Match. */
  checkConditionalWrites(): Promise<ConditionalWriteSupport>;
  /** StorageDriver.put. */
  put(key: string, body: Buffer | string, options?: PutOptions): Promise<{ etag: string }>;
}

export function createObjectWriter(store: S3Store): ObjectWriter {
  const { bucket, client, conditionalClient } = store;

  let probe: Promise<ConditionalWriteSupport> | undefined;
  const runProbe = async (): Promise<ConditionalWriteSupport> => {
    const full = `${store.root}_system/probes/${randomUUID()}`;
    const input = { Bucket: bucket, Key: full, Body: 'live-mem conditional write probe', ContentType: 'text/plain' };
    try {
      await client.send(new PutObjectCommand(input));
      try {
        await conditionalClient.send(new PutObjectCommand({ ...input, IfNoneMatch: '*' }));
        return 'unsupported';
      } catch (error) {
        if (isPreconditionFailure(error)) return 'supported';
        throw error;
      }
    } catch (error) {
      throw storageError(store, 'conditional-write probe', store.strip(full), error);
    } finally {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: full })).catch(() => undefined);
    }
  };
  const checkConditionalWrites = (): Promise<ConditionalWriteSupport> => {
    // A failed probe (network, credentials) is not memoised: the next conditional put tries again.
    probe ??= runProbe().catch((error: unknown) => {
      probe = undefined;
      throw error;
    });
    return probe;
  };

  return {
    checkConditionalWrites,

    async put(key, body, options: PutOptions = {}) {
      const full = store.fullKey(key);
      const bytes = Buffer.from(body);
      const input: PutObjectCommandInput = {
        Bucket: bucket,
        Key: full,
        Body: bytes,
        ContentLength: bytes.length,
        ...(options.contentType !== undefined ? { ContentType: options.contentType } : {}),
      };
      if (options.ifNoneMatch === '*' || options.ifMatch !== undefined) {
        if ((await checkConditionalWrites()) === 'unsupported') throw conditionsIgnored(store);
        return conditionalPut(store, key, input, bytes, options);
      }
      try {
        const res = await client.send(new PutObjectCommand(input));
        return { etag: unquote(res.ETag) ?? md5Hex(bytes) };
      } catch (error) {
        throw storageError(store, 'put', key, error);
      }
    },
  };
}

const conditionsIgnored = (store: S3Store): LiveMemError =>
  new LiveMemError(
    'unsupported',
    `The S3 store at ${store.endpointLabel} ignores conditional writes (If-None-Match); live-mem cannot lock or create safely on it. Use AWS S3, Ceph radosgw, or another store that honours conditional writes.`,
    { endpoint: store.endpointLabel, bucket: store.bucket },
  );

const lost = (key: string, options: PutOptions): LiveMemError =>
  new LiveMemError('precondition_failed', options.ifMatch !== undefined ? `${key} changed since it was read` : `${key} already exists`, { key });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A create-only or compare-and-swap put, through the client that does not retry: a doubtful outcome
 * (a 5xx, a lost response) is settled by reading the object's current version, then tried again.
 */
async function conditionalPut(store: S3Store, key: string, input: PutObjectCommandInput, bytes: Buffer, options: PutOptions): Promise<{ etag: string }> {
  const ours = md5Hex(bytes); // a single-part PutObject's ETag is the body's MD5 (no SSE-KMS here)
  const conditions = {
    ...(options.ifNoneMatch === '*' ? { IfNoneMatch: '*' } : {}),
    ...(options.ifMatch !== undefined ? { IfMatch: unquote(options.ifMatch) } : {}),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await store.conditionalClient.send(new PutObjectCommand({ ...input, ...conditions }));
      return { etag: unquote(res.ETag) ?? ours };
    } catch (error) {
      if (isPreconditionFailure(error)) throw lost(key, options);
      // AWS answers If-Match on a missing key with 404: the version we expected is gone.
      if (options.ifMatch !== undefined && isNotFound(error)) throw lost(key, options);
      if (!isDoubtful(error)) throw storageError(store, 'put', key, error);
      // Outcome unknown: radosgw answers losers of a CAS race with 500 instead of 412, and a response
      // can be lost after the write landed. The object's current version tells which it was.
      // If the store cannot say either, the put's own error is the one to report.
      const current = await headObject(store, input.Key as string).catch(() => {
        throw storageError(store, 'put', key, error);
      });
      if (current?.etag === ours) return { etag: ours };
      const untouched = options.ifMatch !== undefined ? current?.etag === unquote(options.ifMatch) : current === null;
      if (!untouched) throw lost(key, options);
      if (attempt >= store.maxAttempts) throw storageError(store, 'put', key, error);
      await sleep(50 * 2 ** attempt * Math.random());
    }
  }
}
