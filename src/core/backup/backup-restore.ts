import { mapLimit } from '../../shared/concurrency.js';
import { invalid, RESTORE_AS, unconfirmed } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import { sha256, type ManifestFile } from '../backup-manifest.js';
import type { CoreContext } from '../context.js';
import { backupKeys } from '../layout.js';
import { validateSpaceId } from '../validate.js';
import { loadManifest, parseBackupId } from './backup-id.js';
import { requireAbsent, renamed } from './restore-target.js';
import { whyNotContent, whyNotMeta } from './space-content.js';
import { writeSpace } from './space-snapshot.js';

/**
 * Recreates a backup's space, or, with `as`, a new space holding the same content under another
 * id (a copy beside the space that still exists). Everything is checked before anything is written.
 */
export async function restoreBackup(context: CoreContext, caller: Caller, input: { backup_id: string; confirm?: boolean; as?: string }) {
  const { storage } = context;
  const { spaceId, stamp } = parseBackupId(input.backup_id);
  authorize(caller, 'admin', spaceId);
  const as = input.as === undefined || input.as === '' ? undefined : input.as;
  const target = as === undefined ? spaceId : validateSpaceId(as);
  authorize(caller, 'admin', target);
  const what = target === spaceId ? `recreates space '${spaceId}'` : `creates space '${target}' from space '${spaceId}'`;
  if (input.confirm !== true) throw unconfirmed(`restoring backup '${input.backup_id}' ${what}`);
  const manifest = await loadManifest(storage, input.backup_id);
  // Restored exactly, secrets check included (LIVE_MEM_REDACT applies to imports, not here): the
  // backup was taken from this store, of what its writes had already let through.
  // A backup in the store is input like an archive: only a space's content is restored.
  const damaged = (why: string) => invalid(`backup '${input.backup_id}' is damaged: ${why}; nothing restored`, { backup_id: input.backup_id });
  for (const file of manifest.files) {
    const reason = whyNotContent(file.path);
    if (reason) throw damaged(`${file.path} ${reason}`);
  }
  await requireAbsent(storage, target, target === spaceId ? `restore the backup as a new space with ${RESTORE_AS}` : 'pick another space id');
  const keys = backupKeys(spaceId, stamp);
  const readFile = async (file: ManifestFile) => {
    const object = await storage.get(keys.file(file.path));
    if (!object || object.size !== file.size || sha256(object.body) !== file.sha256) {
      throw damaged(`${file.path} ${object ? 'does not match its checksum' : 'is missing'}`);
    }
    const metaProblem = file.path === '_meta.json' ? whyNotMeta(object.body) : undefined;
    if (metaProblem) throw damaged(`_meta.json ${metaProblem}`);
    return { path: file.path, body: object.body };
  };
  await mapLimit(manifest.files, storage.parallelism, readFile); // verify everything before writing anything
  const restored = await writeSpace(context, caller, target, async (write) => {
    for (const file of manifest.files) {
      const { path, body } = await readFile(file);
      await write(path, target === spaceId ? body : renamed(path, body, target)); // byte-identical unless renamed
    }
  });
  return {
    status: 'ok' as const,
    backup_id: input.backup_id,
    space_id: target,
    ...(target !== spaceId ? { from_space: spaceId } : {}),
    files_restored: restored,
    total_size: manifest.total_size,
    checksums_verified: manifest.files.length,
  };
}
