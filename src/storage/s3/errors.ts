import { LiveMemError } from '../../shared/errors.js';

/**
 * What an S3 failure was, read from the SDK's errors (an HTTP status, an S3 error name, Node's errno),
 * and the one `storage_error` a failure becomes, with a reason a person can act on (a missing bucket,
 * denied credentials, an unreachable or stalled endpoint).
 */

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
export const nameOf = (error: unknown): string => {
  const name = (error as SdkError | undefined)?.name ?? '';
  return name === 'Unknown' ? '' : name;
};
/** Node's errno code; connecting to a host with several addresses throws an AggregateError of them. */
export const errnoOf = (error: unknown): string | undefined => {
  const e = error as SdkError | undefined;
  return e?.code ?? e?.errors?.[0]?.code;
};
/**
 * The HTTP handler's own timeouts (connecting, or a socket idle past `timeoutMs`) are named
 * TimeoutError, which the SDK retries; renamed STALLED on their way out of the handler, the SDK
 * gives up at once.
 */
export const STALLED = 'LiveMemS3Stalled';
const isTimeout = (error: unknown): boolean => ['TimeoutError', STALLED].includes(nameOf(error));
const isNetworkError = (error: unknown): boolean => NETWORK_CODES.has(errnoOf(error) ?? '') || isTimeout(error);
/** The request may have reached the store and been applied: only a fresh read can tell. */
export const isDoubtful = (error: unknown): boolean =>
  (statusOf(error) ?? 0) >= 500 || isTimeout(error) || ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'].includes(errnoOf(error) ?? '');
export const isNotFound = (error: unknown): boolean =>
  nameOf(error) !== 'NoSuchBucket' && (statusOf(error) === 404 || nameOf(error) === 'NoSuchKey' || nameOf(error) === 'NotFound');
export const isPreconditionFailure = (error: unknown): boolean =>
  statusOf(error) === 412 || nameOf(error) === 'PreconditionFailed' || nameOf(error) === 'ConditionalRequestConflict' || statusOf(error) === 409;

/** Where a driver's requests go, and how long it waits: what an error message names. */
export interface S3Target {
  readonly bucket: string;
  /** The key prefix, '' or ending in '/'. */
  readonly root: string;
  /** The endpoint, or AWS's for the region. */
  readonly endpointLabel: string;
  readonly connectMs: number;
  readonly timeoutMs: number;
}

/** A failed request as a `storage_error` naming its object and why; LiveMemErrors pass through. */
export function storageError(target: S3Target, operation: string, key: string | undefined, cause: unknown): LiveMemError {
  if (cause instanceof LiveMemError) return cause;
  const { bucket, root, endpointLabel } = target;
  const status = statusOf(cause);
  const name = nameOf(cause);
  const where = key === undefined ? `s3://${bucket}/${root}` : `s3://${bucket}/${root}${key}`;
  let reason: string;
  if (name === 'NoSuchBucket') reason = `bucket ${bucket} does not exist at ${endpointLabel}`;
  else if (status === 403 || DENIED_NAMES.has(name)) {
    reason = `S3 access denied for bucket ${bucket} (${name || 'HTTP 403'}): check the access key, secret and bucket policy`;
  } else if (name === 'CredentialsProviderError') {
    reason = 'no S3 credentials found: set the access key and secret, or configure the AWS credential chain (AWS_ACCESS_KEY_ID, ~/.aws, instance role)';
  } else if (isTimeout(cause)) {
    reason = (cause as { connecting?: boolean }).connecting
      ? `S3 endpoint ${endpointLabel} accepted no connection within ${target.connectMs} ms`
      : `S3 did not answer within ${target.timeoutMs} ms (${endpointLabel}); not retried, see LIVE_MEM_S3_TIMEOUT_MS`;
  } else if (isNetworkError(cause)) reason = `cannot reach S3 endpoint ${endpointLabel} (${errnoOf(cause) ?? name})`;
  else reason = `${name || 'error'}${status === undefined ? '' : ` (HTTP ${status})`}: ${(cause as SdkError | undefined)?.message ?? String(cause)}`;
  return new LiveMemError(
    'storage_error',
    `S3 ${operation} failed for ${where}: ${reason}`,
    { operation, key, bucket, endpoint: endpointLabel, status, awsCode: name || undefined },
    { cause },
  );
}
