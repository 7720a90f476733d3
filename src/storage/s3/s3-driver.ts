import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { PutObjectCommandInput, S3ClientConfig } from '@aws-sdk/client-s3';
import { LiveMemError } from '../../shared/errors.js';
import { normalizeKey, normalizePrefix } from '../../shared/keys.js';
import type { ListOptions, ListPage, ObjectInfo, PutOptions, StorageDriver, StoredObject } from '../types.js';
import { objectTooLarge, readLimit } from '../object-size.js';

/**
 * The S3 driver. This is the only module that imports @aws-sdk/*; the app loads it with a dynamic
 * import() so the default (fs) path never pays for the SDK.
 *
 * Locking rests on conditional writes (If-None-Match: '*' and If-Match). Some S3-compatible stores
 * accept those headers and ignore them, which would silently break every lock, so the first
 * conditional put of a driver's life is preceded by a probe (see checkConditionalWrites).
 */
export interface S3DriverOptions {
  bucket: string;
  /** A custom endpoint (radosgw, MinIO...). Unset = AWS S3. */
  endpoint?: string;
  /** Default 'us-east-1'. */
  region?: string;
  /** Both unset = the AWS default credential chain (env, ~/.aws, SSO, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Prepended to every key ("team-a" or "team-a/"), stripped from list results. */
  prefix?: string;
  /** Default: true when `endpoint` is set (self-hosted stores rarely have wildcard DNS), else false. */
  forcePathStyle?: boolean;
  /** Keep-alive sockets per protocol, and the driver's parallelism. Default 64. */
  maxSockets?: number;
  /** Attempts per request, the first included. Default 4. */
  maxAttempts?: number;
  /**
   * Milliseconds a request may go without receiving a byte (waiting for an answer, or in the middle
   * of one) before it fails with a storage_error. Idle time, not a cap on a large transfer that
   * keeps moving. Such a timeout is not retried: a store silent for that long is stalled, and
   * retries would multiply the wait. Default 30000.
   */
  timeoutMs?: number;
  /** Milliseconds to establish a TCP connection. Default: 5000, or `timeoutMs` if smaller. */
  connectTimeoutMs?: number;
}

/** ListObjectsV2 returns at most this many keys per page. */
const S3_MAX_KEYS = 1000;

export type ConditionalWriteSupport = 'supported' | 'unsupported';

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

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  errors?: SdkError[];
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED']);
const DENIED_NAMES = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'Forbidden', 'InvalidToken', 'ExpiredToken']);

const statusOf = (error: unknown): number | undefined => (error as SdkError | undefined)?.$metadata?.httpStatusCode;
// Errors without a body (HEAD) come back named 'Unknown': only the status tells.
const nameOf = (error: unknown): string => {
  const name = (error as SdkError | undefined)?.name ?? '';
  return name === 'Unknown' ? '' : name;
};
/** Node's errno code; connecting to a host with several addresses throws an AggregateError of them. */
const errnoOf = (error: unknown): string | undefined => {
  const e = error as SdkError | undefined;
  return e?.code ?? e?.errors?.[0]?.code;
};
/**
 * The HTTP handler's own timeouts (connecting, or a socket idle past `timeoutMs`) are named
 * TimeoutError, which the SDK retries; renamed STALLED on their way out of the handler, the SDK
 * gives up at once.
 */
const STALLED = 'LiveMemS3Stalled';
const isTimeout = (error: unknown): boolean => ['TimeoutError', STALLED].includes(nameOf(error));
const isNetworkError = (error: unknown): boolean => NETWORK_CODES.has(errnoOf(error) ?? '') || isTimeout(error);
/** The request may have reached the store and been applied: only a fresh read can tell. */
const isDoubtful = (error: unknown): boolean =>
  (statusOf(error) ?? 0) >= 500 || isTimeout(error) || ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'].includes(errnoOf(error) ?? '');
const isNotFound = (error: unknown): boolean =>
  nameOf(error) !== 'NoSuchBucket' && (statusOf(error) === 404 || nameOf(error) === 'NoSuchKey' || nameOf(error) === 'NotFound');
const isPreconditionFailure = (error: unknown): boolean =>
  statusOf(error) === 412 || nameOf(error) === 'PreconditionFailed' || nameOf(error) === 'ConditionalRequestConflict' || statusOf(error) === 409;

/** ETags arrive quoted; callers treat them as opaque, and radosgw refuses quoted If-Match values. */
const unquote = (etag: string | undefined): string | undefined => (etag === undefined ? undefined : etag.replace(/^(W\/)?"|"$/g, ''));
const md5Hex = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function normalizeRoot(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  try {
    return `${normalizeKey(trimmed)}/`;
  } catch (error) {
    throw new LiveMemError('config_error', `invalid S3 prefix ${JSON.stringify(prefix)}: ${(error as Error).message}`);
  }
}

export function createS3Driver(options: S3DriverOptions): S3StorageDriver {
  const bucket = options.bucket;
  if (!bucket) throw new LiveMemError('config_error', 'the S3 driver needs a bucket');
  const root = normalizeRoot(options.prefix);
  const region = options.region ?? 'us-east-1';
  const endpointLabel = options.endpoint ?? `https://s3.${region}.amazonaws.com`;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const connectMs = options.connectTimeoutMs ?? Math.min(5_000, timeoutMs);

  const maxSockets = options.maxSockets ?? 64;
  const agentOptions = { keepAlive: true, maxSockets };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const base: S3ClientConfig = {
    region,
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    // The SDK's default CRC checksums break streamed uploads on radosgw (411) and other S3 look-alikes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      httpAgent,
      httpsAgent,
      connectionTimeout: connectMs,
      // Idle time on the socket (the SDK's requestTimeout would cap a whole transfer, however large).
      socketTimeout: timeoutMs,
    },
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId !== undefined && options.secretAccessKey !== undefined
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
  };
  const client = new S3Client({ ...base, maxAttempts, retryMode: 'standard' });
  // Conditional puts are not safely retryable by the SDK: a retry of a create that did land gets a 412
  // and would report a lost race. They go through this client and resolve doubtful outcomes themselves.
  const conditionalClient = new S3Client({ ...base, maxAttempts: 1 });
  for (const sdk of [client, conditionalClient]) {
    // Innermost (inside the retry step): what the SDK's retry strategy sees is already renamed.
    sdk.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          // A reset or a broken pipe also arrives named TimeoutError, with its errno: still retried.
          if (nameOf(error) !== 'TimeoutError' || errnoOf(error) !== undefined) throw error;
          const message = (error as Error).message;
          throw Object.assign(new Error(message), { name: STALLED, connecting: /establish a connection/.test(message) });
        }
      },
      { step: 'deserialize', priority: 'low', name: 'liveMemNoRetryOnTimeout' },
    );
  }

  const location = `s3://${bucket}${root === '' ? '' : `/${root.slice(0, -1)}`}`;
  const fullKey = (key: string): string => root + normalizeKey(key);
  const strip = (key: string): string => (key.startsWith(root) ? key.slice(root.length) : key);

  const storageError = (operation: string, key: string | undefined, cause: unknown): LiveMemError => {
    if (cause instanceof LiveMemError) return cause;
    const status = statusOf(cause);
    const name = nameOf(cause);
    const target = key === undefined ? `s3://${bucket}/${root}` : `s3://${bucket}/${root}${key}`;
    let reason: string;
    if (name === 'NoSuchBucket') reason = `bucket ${bucket} does not exist at ${endpointLabel}`;
    else if (status === 403 || DENIED_NAMES.has(name)) {
      reason = `S3 access denied for bucket ${bucket} (${name || 'HTTP 403'}): check the access key, secret and bucket policy`;
    } else if (name === 'CredentialsProviderError') {
      reason = 'no S3 credentials found: set the access key and secret, or configure the AWS credential chain (AWS_ACCESS_KEY_ID, ~/.aws, instance role)';
    } else if (isTimeout(cause)) {
      reason = (cause as { connecting?: boolean }).connecting
        ? `S3 endpoint ${endpointLabel} accepted no connection within ${connectMs} ms`
        : `S3 did not answer within ${timeoutMs} ms (${endpointLabel}); not retried, see LIVE_MEM_S3_TIMEOUT_MS`;
    } else if (isNetworkError(cause)) reason = `cannot reach S3 endpoint ${endpointLabel} (${errnoOf(cause) ?? name})`;
    else reason = `${name || 'error'}${status === undefined ? '' : ` (HTTP ${status})`}: ${(cause as SdkError | undefined)?.message ?? String(cause)}`;
    return new LiveMemError(
      'storage_error',
      `S3 ${operation} failed for ${target}: ${reason}`,
      { operation, key, bucket, endpoint: endpointLabel, status, awsCode: name || undefined },
      { cause },
    );
  };

  const head = async (full: string): Promise<{ etag: string; size: number; lastModified: Date } | null> => {
    try {
      const res = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: full }));
      return { etag: unquote(res.ETag) ?? '', size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw storageError('stat', strip(full), error);
    }
  };

  let probe: Promise<ConditionalWriteSupport> | undefined;
  const runProbe = async (): Promise<ConditionalWriteSupport> => {
    const full = `${root}_system/probes/${randomUUID()}`;
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
      throw storageError('conditional-write probe', strip(full), error);
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

  const lost = (key: string, options: PutOptions): LiveMemError =>
    new LiveMemError('precondition_failed', options.ifMatch !== undefined ? `${key} changed since it was read` : `${key} already exists`, { key });

  const conditionalPut = async (key: string, input: PutObjectCommandInput, bytes: Buffer, options: PutOptions): Promise<{ etag: string }> => {
    if ((await checkConditionalWrites()) === 'unsupported') {
      throw new LiveMemError(
        'unsupported',
        `The S3 store at ${endpointLabel} ignores conditional writes (If-None-Match); live-mem cannot lock or create safely on it. Use AWS S3, Ceph radosgw, or another store that honours conditional writes.`,
        { endpoint: endpointLabel, bucket },
      );
    }
    const ours = md5Hex(bytes); // a single-part PutObject's ETag is the body's MD5 (no SSE-KMS here)
    const conditions = {
      ...(options.ifNoneMatch === '*' ? { IfNoneMatch: '*' } : {}),
      ...(options.ifMatch !== undefined ? { IfMatch: unquote(options.ifMatch) } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await conditionalClient.send(new PutObjectCommand({ ...input, ...conditions }));
        return { etag: unquote(res.ETag) ?? ours };
      } catch (error) {
        if (isPreconditionFailure(error)) throw lost(key, options);
        // AWS answers If-Match on a missing key with 404: the version we expected is gone.
        if (options.ifMatch !== undefined && isNotFound(error)) throw lost(key, options);
        if (!isDoubtful(error)) throw storageError('put', key, error);
        // Outcome unknown: radosgw answers losers of a CAS race with 500 instead of 412, and a response
        // can be lost after the write landed. The object's current version tells which it was.
        // If the store cannot say either, the put's own error is the one to report.
        const current = await head(input.Key as string).catch(() => {
          throw storageError('put', key, error);
        });
        if (current?.etag === ours) return { etag: ours };
        const untouched = options.ifMatch !== undefined ? current?.etag === unquote(options.ifMatch) : current === null;
        if (!untouched) throw lost(key, options);
        if (attempt >= maxAttempts) throw storageError('put', key, error);
        await sleep(50 * 2 ** attempt * Math.random());
      }
    }
  };

  return {
    name: 's3',
    location,
    parallelism: maxSockets,
    checkConditionalWrites,

    async get(key, options = {}): Promise<StoredObject | null> {
      const full = fullKey(key);
      const limit = readLimit(options.maxBytes);
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: full }));
        if ((res.ContentLength ?? 0) > limit) {
          (res.Body as { destroy?: () => void } | undefined)?.destroy?.(); // not one byte of it read
          throw objectTooLarge(key, res.ContentLength ?? 0, limit);
        }
        const body = Buffer.from((await res.Body?.transformToByteArray()) ?? []);
        return { key, body, size: body.length, lastModified: res.LastModified ?? new Date(0), etag: unquote(res.ETag) ?? md5Hex(body) };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw storageError('get', key, error);
      }
    },

    async stat(key): Promise<ObjectInfo | null> {
      const found = await head(fullKey(key));
      return found ? { key, ...found } : null;
    },

    async put(key, body, options: PutOptions = {}) {
      const full = fullKey(key);
      const bytes = Buffer.from(body);
      const input: PutObjectCommandInput = {
        Bucket: bucket,
        Key: full,
        Body: bytes,
        ContentLength: bytes.length,
        ...(options.contentType !== undefined ? { ContentType: options.contentType } : {}),
      };
      if (options.ifNoneMatch === '*' || options.ifMatch !== undefined) return conditionalPut(key, input, bytes, options);
      try {
        const res = await client.send(new PutObjectCommand(input));
        return { etag: unquote(res.ETag) ?? md5Hex(bytes) };
      } catch (error) {
        throw storageError('put', key, error);
      }
    },

    async list(prefix, options: ListOptions = {}): Promise<ListPage> {
      const normalized = normalizePrefix(prefix);
      const limit = Math.min(S3_MAX_KEYS, Math.max(1, Math.floor(options.limit ?? S3_MAX_KEYS)));
      try {
        const res = await client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
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
        throw storageError('list', normalized, error);
      }
    },

    async delete(key) {
      const full = fullKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: full }));
      } catch (error) {
        if (isNotFound(error)) return;
        throw storageError('delete', key, error);
      }
    },

    async deleteMany(keys) {
      const fulls = [...new Set(keys.map(fullKey))]; // every key validated before any request
      for (let start = 0; start < fulls.length; start += 1000) {
        const batch = fulls.slice(start, start + 1000);
        let errors: { Key?: string; Code?: string; Message?: string }[];
        try {
          // Quiet only drops the per-key successes from the reply; failures are still listed in Errors.
          const res = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
          errors = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        } catch (error) {
          throw storageError(`deleteMany (${batch.length} keys)`, undefined, error);
        }
        if (errors.length > 0) {
          const failures = errors.map((e) => ({ key: strip(e.Key ?? '?'), code: e.Code, message: e.Message }));
          const shown = failures
            .slice(0, 10)
            .map((f) => `${f.key} (${f.code ?? 'error'}: ${f.message ?? ''})`)
            .join(', ');
          throw new LiveMemError(
            'storage_error',
            `S3 deleteMany failed for ${failures.length} of ${batch.length} keys in ${location}: ${shown}${failures.length > 10 ? ', …' : ''}`,
            { failures, bucket },
          );
        }
      }
    },

    async close() {
      client.destroy();
      conditionalClient.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
