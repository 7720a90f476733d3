import http from 'node:http';
import https from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { LiveMemError } from '../../shared/errors.js';
import { normalizeKey } from '../../shared/keys.js';
import { errnoOf, nameOf, type S3Target, STALLED } from './errors.js';

/**
 * An S3 driver's own state, which its operations share: its options read once, the key prefix, and
 * the SDK clients with their sockets — one that retries, one that does not, for conditional puts.
 */

/** createS3Driver's options. */
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

/** What createS3Store made of the options, shared by every operation of one driver. */
export interface S3Store extends S3Target {
  /** Retries as the SDK's standard mode does (`maxAttempts`). */
  readonly client: S3Client;
  /**
   * Conditional puts are not safely retryable by the SDK: a retry of a create that did land gets a 412
   * and would report a lost race. They go through this client and resolve doubtful outcomes themselves.
   */
  readonly conditionalClient: S3Client;
  readonly maxAttempts: number;
  readonly maxSockets: number;
  /** "s3://bucket/prefix". */
  readonly location: string;
  /** A key with the prefix, normalised and confined before any request. */
  fullKey(key: string): string;
  /** A listed key without the prefix. */
  strip(key: string): string;
  /** Destroys the SDK clients and their sockets. */
  close(): void;
}

export function createS3Store(options: S3DriverOptions): S3Store {
  const bucket = options.bucket;
  if (!bucket) throw new LiveMemError('config_error', 'the S3 driver needs a bucket');
  const root = normalizeRoot(options.prefix);
  const region = options.region ?? 'us-east-1';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const connectMs = options.connectTimeoutMs ?? Math.min(5_000, timeoutMs);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
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
  const conditionalClient = new S3Client({ ...base, maxAttempts: 1 });
  for (const sdk of [client, conditionalClient]) {
    giveUpOnStalls(sdk);
    // The SDK's logger step builds a log-safe copy of every request and answer (each of a listing's
    // thousand entries walked against its schema) before handing it to the logger, a no-op one when,
    // as here, none is given: CPU spent on every request for nothing.
    sdk.middlewareStack.remove('loggerMiddleware');
  }

  return {
    bucket,
    root,
    endpointLabel: options.endpoint ?? `https://s3.${region}.amazonaws.com`,
    connectMs,
    timeoutMs,
    client,
    conditionalClient,
    maxAttempts,
    maxSockets,
    location: `s3://${bucket}${root === '' ? '' : `/${root.slice(0, -1)}`}`,
    fullKey: (key) => root + normalizeKey(key),
    strip: (key) => (key.startsWith(root) ? key.slice(root.length) : key),
    close() {
      client.destroy();
      conditionalClient.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** The key prefix: '' or a normalised key ending in '/'. */
function normalizeRoot(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  try {
    return `${normalizeKey(trimmed)}/`;
  } catch (error) {
    throw new LiveMemError('config_error', `invalid S3 prefix ${JSON.stringify(prefix)}: ${(error as Error).message}`);
  }
}

/** Renames the HTTP handler's timeouts to STALLED (errors.ts), so the SDK does not retry them. */
function giveUpOnStalls(sdk: S3Client): void {
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
