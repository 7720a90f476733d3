import type { Readable } from 'node:stream';
import { refusingSlots } from '../../shared/concurrency.js';
import { LiveMemError, unconfirmed } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import { authorize, type Caller } from '../caller.js';
import { MANIFEST_ENTRY, type Manifest } from '../backup-manifest.js';
import type { CoreContext } from '../context.js';
import { backupKeys } from '../layout.js';
import { validateSpaceId } from '../validate.js';
import { packArchive, type ArchiveEntry } from './archive.js';
import { toBase64 } from './archive-base64.js';
import { createBackup } from './backup-create.js';
import { loadManifest, parseBackupId } from './backup-id.js';
import { listBackups } from './backup-list.js';
import { restoreBackup } from './backup-restore.js';
import { exportStream } from './space-export.js';
import { importArchive } from './space-import.js';
import { tally, type TransferOptions } from './transfer-progress.js';

/**
 * space_export and backup_download build their whole archive in memory (up to exportMaxBytes, then
 * base64 and JSON on top): this many at once per process, so parallel calls cannot take the memory.
 */
export const ARCHIVES_IN_MEMORY = 2;

/** Backups, exports and imports: snapshots that restore exactly, verified by checksum. */
export function createBackupService(context: CoreContext) {
  const { storage } = context;
  const inMemory = refusingSlots(ARCHIVES_IN_MEMORY);
  const busy = () =>
    new LiveMemError(
      'conflict',
      `${ARCHIVES_IN_MEMORY} archives are already being prepared in memory (space_export, backup_download): retry in a moment, or use the CLI (\`live-mem export\`, \`live-mem backup download\`), which streams`,
      { archives_in_memory: ARCHIVES_IN_MEMORY },
    );

  return {
    exportStream: (caller: Caller, spaceId: string, options: TransferOptions = {}) => exportStream(context, caller, spaceId, options),

    async create(caller: Caller, input: { space_id: string; description?: string }) {
      return createBackup(context, caller, input);
    },

    async list(caller: Caller, input: { space_id?: string }) {
      return listBackups(storage, caller, input);
    },

    /** Recreates a backup's space, or a copy of it under `as` (backup-restore.ts). */
    async restore(caller: Caller, input: { backup_id: string; confirm?: boolean; as?: string }) {
      return restoreBackup(context, caller, input);
    },

    /** A stored backup as a tar.gz stream (the same archive format as an export). */
    async downloadStream(caller: Caller, input: { backup_id: string }, options: TransferOptions = {}): Promise<{ stream: Readable; manifest: Manifest }> {
      const { spaceId, stamp } = parseBackupId(input.backup_id);
      authorize(caller, 'read', spaceId);
      const manifest = await loadManifest(storage, input.backup_id);
      const keys = backupKeys(spaceId, stamp);
      const passed = tally('reading', manifest.files.length, options.onProgress);
      async function* entries(): AsyncGenerator<ArchiveEntry> {
        for (const file of manifest.files) {
          const object = await storage.get(keys.file(file.path));
          if (!object) throw new LiveMemError('storage_error', `backup '${input.backup_id}' lost ${file.path}`);
          passed(object.body);
          yield { path: `${spaceId}/${file.path}`, body: object.body };
        }
        yield { path: MANIFEST_ENTRY, body: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) };
      }
      return { stream: packArchive(entries(), context.clock()), manifest };
    },

    /** backup_download: the archive in base64, capped. */
    async download(caller: Caller, input: { backup_id: string }) {
      authorize(caller, 'read', parseBackupId(input.backup_id).spaceId);
      return inMemory.run(async () => {
        const { stream, manifest } = await this.downloadStream(caller, input);
        const archive = await toBase64(
          stream,
          `backup '${input.backup_id}'`,
          `npx live-mem backup download ${input.backup_id} -o backup.tar.gz`,
          context.limits.exportMaxBytes,
        );
        return { status: 'ok' as const, backup_id: input.backup_id, space_id: manifest.space_id, ...archive, files_count: manifest.files.length };
      }, busy);
    },

    async delete(caller: Caller, input: { backup_id: string; confirm?: boolean }) {
      const { spaceId, stamp } = parseBackupId(input.backup_id);
      authorize(caller, 'admin', spaceId);
      if (input.confirm !== true) throw unconfirmed(`deleting backup '${input.backup_id}' cannot be undone`);
      await loadManifest(storage, input.backup_id);
      const keys = backupKeys(spaceId, stamp);
      // The manifest first: the backup leaves every listing at once, even if the rest is cut short.
      await storage.delete(keys.manifest);
      const rest = await listKeys(storage, keys.root);
      await storage.deleteMany(rest);
      return { status: 'deleted' as const, backup_id: input.backup_id, files_deleted: rest.length + 1 };
    },

    /** space_export: the archive in base64, capped. */
    async exportBase64(caller: Caller, input: { space_id: string }) {
      authorize(caller, 'read', validateSpaceId(input.space_id));
      return inMemory.run(async () => {
        const { stream, manifest } = await exportStream(context, caller, input.space_id);
        const archive = await toBase64(
          stream,
          `space '${input.space_id}'`,
          `npx live-mem export ${input.space_id} -o ${input.space_id}.tar.gz`,
          context.limits.exportMaxBytes,
        );
        return { status: 'ok' as const, space_id: input.space_id, ...archive, files_count: (await manifest).files.length };
      }, busy);
    },

    /** Imports an archive as its own space or under `as`, verified whole first (space-import.ts). */
    async importArchive(caller: Caller, open: () => AsyncIterable<Buffer>, options: { as?: string } & TransferOptions = {}) {
      return importArchive(context, caller, open, options);
    },
  };
}

export type BackupService = ReturnType<typeof createBackupService>;
