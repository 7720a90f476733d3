import { createHash } from 'node:crypto';

/** S3 ETags as the driver hands them out: unquoted, and for a single-part PutObject the body's MD5. */

/** ETags arrive quoted; callers treat them as opaque, and radosgw refuses quoted If-Match values. */
export const unquote = (etag: string | undefined): string | undefined => (etag === undefined ? undefined : etag.replace(/^(W\/)?"|"$/g, ''));
export const md5Hex = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');
