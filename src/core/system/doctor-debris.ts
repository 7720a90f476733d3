import type { DebrisFile, StorageDriver } from '../../storage/types.js';
import { type Finding, plural } from './doctor-space.js';

/**
 * The doctor's look at the temp and lock files of the fs driver, per top folder: stale ones (their
 * writer was killed) are removed with `fix`, young ones belong to writes in progress and are left
 * alone. A driver without debris (S3, memory) has nothing to say.
 */
/** Temp and lock files (fs): stale ones were left by killed writers; young ones belong to writes in progress. */
export async function checkDebris(storage: StorageDriver, prefixes: string[], fix: boolean): Promise<Finding[]> {
  if (!storage.debris) return [];
  const files: DebrisFile[] = [];
  for (const prefix of prefixes) files.push(...(await storage.debris(prefix, { remove: fix })));
  const byFolder = new Map<string, DebrisFile[]>();
  for (const file of files) {
    const top = file.path.slice(0, file.path.indexOf('/') + 1) || '/';
    byFolder.set(top, [...(byFolder.get(top) ?? []), file]);
  }
  const findings: Finding[] = [];
  for (const [folder, found] of byFolder) {
    const spaceId = folder.endsWith('/') && !folder.startsWith('_') ? folder.slice(0, -1) : undefined;
    const where = { check: 'debris', ...(spaceId ? { space_id: spaceId } : {}) };
    const stale = found.filter((file) => file.stale);
    const removed = stale.filter((file) => file.removed);
    const young = found.length - stale.length;
    const list = (some: DebrisFile[]) =>
      `${some
        .slice(0, 3)
        .map((file) => file.path)
        .join(', ')}${some.length > 3 ? ', …' : ''}`;
    if (removed.length > 0)
      findings.push({
        ...where,
        status: 'ok',
        fixable: true,
        fixed: true,
        message: `removed ${plural(removed.length, 'temp/lock file')} killed writers left in ${folder}: ${list(removed)}`,
      });
    const left = stale.filter((file) => !file.removed);
    if (left.length > 0) {
      findings.push({
        ...where,
        status: 'warn',
        fixable: true,
        fix: 'deletes them',
        message: `${plural(left.length, 'temp/lock file')} in ${folder} left by writers that were killed (older than an hour, or their process is gone): ${list(left)}`,
        hint: 'harmless: a listing of their folder removes them in time',
      });
    }
    if (young > 0)
      findings.push({
        ...where,
        status: 'ok',
        fixable: false,
        message: `${plural(young, 'temp/lock file')} of writes in progress in ${folder} (younger than an hour, their process running): left alone`,
      });
  }
  return findings;
}
