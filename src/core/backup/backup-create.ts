import { boundedTasks } from '../../shared/concurrency.js';
import { isoSeconds } from '../../shared/time.js';
import { openBatch } from '../../storage/batch.js';
import { authorize, type Caller } from '../caller.js';
import type { ManifestFile } from '../backup-manifest.js';
import { lockSpace } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { backupKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { manifestOf, readSpace, spacePaths } from './space-snapshot.js';
import { LOCK_WAIT_MS } from './space-export.js';

/**
 * backup_create: a copy of a space inside the store, taken under the space's lease so that no
 * consolidation writes meanwhile; its manifest, written last, is what makes it a backup.
 */
export async function createBackup(context: CoreContext, caller: Caller, input: { space_id: string; description?: string }) {
  const { storage } = context;
  const spaceId = validateSpaceId(input.space_id);
  authorize(caller, 'write', spaceId);
  const description = String(input.description ?? '').slice(0, 2_000);
  await requireSpace(context, spaceId);
  const held = await lockSpace(context, spaceId, caller, 'backup', { waitMs: LOCK_WAIT_MS });
  try {
    const now = context.clock();
    const stamp = `${now.toISOString().slice(0, 19).replace(/:/g, '-')}-${context.randomId()}`;
    const keys = backupKeys(spaceId, stamp);
    const files: ManifestFile[] = [];
    const batch = openBatch(storage);
    const tasks = boundedTasks(storage.parallelism);
    for await (const { path, body } of readSpace(context, spaceId, await spacePaths(context, spaceId), files)) {
      await tasks.run(() => batch.put(keys.file(path), body));
    }
    await tasks.drain();
    await batch.flush();
    const manifest = manifestOf(context, spaceId, description, files);
    // The manifest is written last and create-only: a backup without one never finished and is not listed.
    await storage.put(keys.manifest, `${JSON.stringify(manifest, null, 2)}\n`, { ifNoneMatch: '*', contentType: 'application/json' });
    return {
      status: 'created' as const,
      backup_id: `${spaceId}/${stamp}`,
      space_id: spaceId,
      files_backed_up: files.length,
      total_size: manifest.total_size,
      description,
      created_at: isoSeconds(new Date(manifest.created_at)),
      ...(held.warnings.length > 0 ? { warnings: held.warnings } : {}),
    };
  } finally {
    await held.release();
  }
}
