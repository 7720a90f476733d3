import { invalid, LiveMemError } from '../../shared/errors.js';
import type { StorageDriver } from '../../storage/types.js';
import { parseManifest, type Manifest } from '../backup-manifest.js';
import { backupKeys } from '../layout.js';

/**
 * A backup's id and where it lives: every backup operation starts from the id a caller gives, checked
 * here, and most read its manifest (written last, so a backup without one is unfinished).
 */

/** `{space}/{YYYY-MM-DDTHH-MM-SS}-{random6}`: sortable, never colliding. */
const BACKUP_ID = /^([a-zA-Z0-9][a-zA-Z0-9_-]{0,63})\/(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9a-z]{6})$/;

/** A backup id as backup_list shows it, checked: its space and its stamp. */
export function parseBackupId(backupId: string): { spaceId: string; stamp: string } {
  const match = typeof backupId === 'string' ? BACKUP_ID.exec(backupId) : null;
  if (!match) throw invalid(`invalid backup_id ${JSON.stringify(backupId)}: expected {space_id}/{YYYY-MM-DDTHH-MM-SS}-{id}, as backup_list shows`);
  return { spaceId: match[1] as string, stamp: match[2] as string };
}

/** A stored backup's manifest: `not_found` if it has none (it never finished, or does not exist). */
export async function loadManifest(storage: StorageDriver, backupId: string): Promise<Manifest> {
  const { spaceId, stamp } = parseBackupId(backupId);
  const object = await storage.get(backupKeys(spaceId, stamp).manifest);
  if (!object) throw new LiveMemError('not_found', `backup '${backupId}' does not exist`, { backup_id: backupId });
  return parseManifest(object.body.toString('utf8'), `backup ${backupId}`);
}
