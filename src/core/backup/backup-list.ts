import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import { listPrefixes } from '../../storage/list.js';
import type { StorageDriver } from '../../storage/types.js';
import { authorize, canAccessSpace, type Caller } from '../caller.js';
import { BACKUPS_PREFIX } from '../layout.js';
import { SPACE_ID_PATTERN, validateSpaceId } from '../validate.js';
import { loadManifest } from './backup-id.js';

/**
 * backup_list: the finished backups (those with a manifest) of one space or of every space the
 * caller may read, newest first; unfinished ones and folders that are not ours are left out.
 */
export async function listBackups(storage: StorageDriver, caller: Caller, input: { space_id?: string }) {
  authorize(caller, 'read', input.space_id ? validateSpaceId(input.space_id) : undefined);
  const spaces = input.space_id
    ? [input.space_id]
    : (await listPrefixes(storage, BACKUPS_PREFIX))
        .map((p) => p.slice(BACKUPS_PREFIX.length, -1))
        .filter((id) => SPACE_ID_PATTERN.test(id) && canAccessSpace(caller, id));
  const ids = (
    await Promise.all(
      spaces.map(async (spaceId) => (await listPrefixes(storage, `${BACKUPS_PREFIX}${spaceId}/`)).map((p) => p.slice(BACKUPS_PREFIX.length, -1))),
    )
  ).flat();
  const backups = (
    await mapLimit(ids, storage.parallelism, async (backupId) => {
      try {
        const manifest = await loadManifest(storage, backupId);
        return {
          backup_id: backupId,
          space_id: manifest.space_id,
          created_at: manifest.created_at,
          description: manifest.description,
          files_count: manifest.files.length,
          total_size: manifest.total_size,
          live_mem_version: manifest.live_mem_version,
        };
      } catch (error) {
        if (isLiveMemError(error, 'not_found') || isLiveMemError(error, 'invalid_input')) return null; // unfinished, or not ours
        throw error;
      }
    })
  ).filter((backup) => backup !== null);
  // Newest first by the manifests' own times, then shown in the results' one format.
  backups.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  const shown = backups.map((backup) => ({ ...backup, created_at: isoSeconds(new Date(backup.created_at)) }));
  return { status: 'ok' as const, backups: shown, total: shown.length };
}
