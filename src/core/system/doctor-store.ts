import { isLiveMemError } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { SYSTEM_PREFIX } from '../layout.js';
import { failure, type Finding } from './doctor-space.js';

/**
 * The doctor's probes of the store itself (doctor.ts runs them first): can it be written, read and
 * deleted, and does it honour create-only writes. The other checks are worth running only when these
 * pass. A storage failure people can act on (a full disk, a permission) is named, with what to do.
 */

/** Storage failures people can act on, by their system error code: what happened and what to do. */
const CAUSES: Record<string, { what: string; hint: string }> = {
  ENOSPC: { what: 'the disk is full', hint: 'free some space on the disk that holds the store (`df -h`), then run `live-mem doctor` again' },
  EDQUOT: { what: 'the disk quota is used up', hint: 'free some space or raise the quota, then run `live-mem doctor` again' },
  EACCES: { what: 'permission denied', hint: 'give the user running live-mem write access to the store folder' },
  EPERM: { what: 'operation not permitted', hint: 'give the user running live-mem write access to the store folder' },
  EROFS: { what: 'the file system is read-only', hint: 'mount the store read-write, or point --home (LIVE_MEM_HOME) at a writable folder' },
};
const causeOf = (error: unknown) => {
  const code = isLiveMemError(error) ? error.data.code : (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? CAUSES[code] : undefined;
};

/** A write, a read and a delete of a probe object under _system/. */
export async function checkStore(context: CoreContext): Promise<Finding> {
  const { storage } = context;
  const key = `${SYSTEM_PREFIX}doctor/${context.randomId()}-${context.clock().getTime()}.probe`;
  const body = `live-mem doctor probe ${context.clock().toISOString()}`;
  const start = context.monotonic();
  try {
    await storage.put(key, body, { contentType: 'text/plain' });
    const read = await storage.get(key);
    await storage.delete(key);
    if (read?.body.toString('utf8') !== body) throw new Error('an object written could not be read back as written');
    return {
      check: 'store',
      status: 'ok',
      fixable: false,
      message: `${storage.name} store at ${storage.location} reachable (write, read, delete in ${Math.round(context.monotonic() - start)} ms)`,
    };
  } catch (error) {
    const cause = causeOf(error);
    return {
      check: 'store',
      status: 'error',
      fixable: false,
      message: `${storage.name} store at ${storage.location} is not usable: ${cause ? `${cause.what}: ` : ''}${failure(error)}`,
      hint:
        cause?.hint ??
        (storage.name === 's3'
          ? 'check LIVE_MEM_S3_ENDPOINT, LIVE_MEM_S3_BUCKET and the credentials (the bucket must exist)'
          : 'check that the folder (--home, LIVE_MEM_HOME) exists or can be created, and is writable'),
    };
  }
}

/**
 * Create-only twice on one key: the second must fail, or two writers would clobber each other.
 * Only a second write that lands (or the driver's own probe) is a verdict on the store; a write
 * that fails (a full disk, a permission) says the store cannot be written, and why.
 */
export async function checkConditionalWrites(context: CoreContext): Promise<Finding> {
  const { storage } = context;
  const check = 'conditional-writes';
  const key = `${SYSTEM_PREFIX}doctor/${context.randomId()}-${context.clock().getTime()}.create-only`;
  let verdict: string | undefined;
  try {
    if ((await storage.checkConditionalWrites?.()) === 'unsupported') verdict = 'the store accepts If-None-Match and ignores it';
    else {
      await storage.put(key, 'first', { ifNoneMatch: '*' });
      const second = await storage.put(key, 'second', { ifNoneMatch: '*' }).then(
        () => 'overwritten',
        (error: unknown) => (isLiveMemError(error, 'precondition_failed') ? 'refused' : Promise.reject(error)),
      );
      if (second === 'overwritten') verdict = 'a second create-only write of one key succeeded';
    }
  } catch (error) {
    const cause = causeOf(error);
    return {
      check,
      status: 'error',
      fixable: false,
      message: `the store cannot be written${cause ? `: ${cause.what}` : ''} (${failure(error)}); conditional writes could not be checked`,
      hint: cause?.hint ?? 'check that the store is reachable and writable, then run `live-mem doctor` again',
    };
  } finally {
    await storage.delete(key).catch(() => undefined);
  }
  if (verdict === undefined) {
    return { check, status: 'ok', fixable: false, message: 'create-only writes are honoured (a second create of one key is refused)' };
  }
  return {
    check,
    status: 'error',
    fixable: false,
    message: `conditional writes are not honoured: ${verdict}; locks and create-only writes are unsafe on this store`,
    hint: 'use AWS S3, Ceph radosgw or another store that honours If-None-Match and If-Match',
  };
}
