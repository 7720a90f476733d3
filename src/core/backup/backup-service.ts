import type { Readable } from 'node:stream';
import { boundedTasks, mapLimit, refusingSlots } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError, RESTORE_AS, unconfirmed } from '../../shared/errors.js';
import { openBatch } from '../../storage/batch.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import { authorize, canAccessSpace, type Caller } from '../caller.js';
import { lockSpace } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { BACKUPS_PREFIX, backupKeys, spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { checkBankFileSize, SPACE_ID_PATTERN, validateSpaceId } from '../validate.js';
import { packArchive, readArchive, type ArchiveEntry } from './archive.js';
import { MANIFEST_ENTRY, parseManifest, sha256, type Manifest, type ManifestFile } from '../backup-manifest.js';
import { importedBody, whyNotContent, whyNotMeta } from './space-content.js';
import { manifestOf, readSpace, spacePaths, writeSpace } from './space-snapshot.js';
import { tally, type TransferOptions } from './transfer-progress.js';
import { importCaps, verifyArchive } from './verify-archive.js';
import { redactImported, type FileRedaction } from './import-redaction.js';
import { isoSeconds } from '../../shared/time.js';

/** `{space}/{YYYY-MM-DDTHH-MM-SS}-{random6}`: sortable, never colliding. */
const BACKUP_ID = /^([a-zA-Z0-9][a-zA-Z0-9_-]{0,63})\/(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9a-z]{6})$/;
/** A backup or export waits this long for a running consolidation to finish before giving up. */
const LOCK_WAIT_MS = 120_000;
/**
 * space_export and backup_download build their whole archive in memory (up to exportMaxBytes, then
 * base64 and JSON on top): this many at once per process, so parallel calls cannot take the memory.
 */
export const ARCHIVES_IN_MEMORY = 2;

export function parseBackupId(backupId: string): { spaceId: string; stamp: string } {
  const match = typeof backupId === 'string' ? BACKUP_ID.exec(backupId) : null;
  if (!match) throw invalid(`invalid backup_id ${JSON.stringify(backupId)}: expected {space_id}/{YYYY-MM-DDTHH-MM-SS}-{id}, as backup_list shows`);
  return { spaceId: match[1] as string, stamp: match[2] as string };
}

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

  const loadManifest = async (backupId: string): Promise<Manifest> => {
    const { spaceId, stamp } = parseBackupId(backupId);
    const object = await storage.get(backupKeys(spaceId, stamp).manifest);
    if (!object) throw new LiveMemError('not_found', `backup '${backupId}' does not exist`, { backup_id: backupId });
    return parseManifest(object.body.toString('utf8'), `backup ${backupId}`);
  };

  /** Fails early, before an archive is read twice, if the space exists (the claim checks again). */
  const requireAbsent = async (spaceId: string, otherwise: string): Promise<void> => {
    if (await storage.stat(spaceKeys(spaceId).meta)) {
      throw new LiveMemError('already_exists', `space '${spaceId}' exists: delete it first, or ${otherwise}`, { space_id: spaceId });
    }
  };

  /** `_meta.json` under a new space id, when importing with --as. */
  const renamed = (path: string, body: Buffer, to: string): Buffer =>
    path === '_meta.json' ? Buffer.from(`${JSON.stringify({ ...(JSON.parse(body.toString('utf8')) as object), space_id: to }, null, 2)}\n`) : body;

  /** Collects a bounded archive in memory for a base64 answer; past the cap, says to use the CLI. */
  const toBase64 = async (archive: Readable, what: string, cli: string) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of archive as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > context.limits.exportMaxBytes) {
        archive.destroy();
        throw new LiveMemError(
          'invalid_input',
          `${what} is larger than ${context.limits.exportMaxBytes} bytes once compressed, too large to send in base64: run \`${cli}\` instead`,
          { max_bytes: context.limits.exportMaxBytes },
        );
      }
      chunks.push(chunk);
    }
    const archiveBytes = Buffer.concat(chunks);
    return { archive_base64: archiveBytes.toString('base64'), archive_size: archiveBytes.length };
  };

  /** A tar.gz stream of a space taken under its lease (released when the stream ends or fails). */
  const exportStream = async (caller: Caller, spaceId: string, options: TransferOptions = {}): Promise<{ stream: Readable; manifest: Promise<Manifest> }> => {
    authorize(caller, 'read', validateSpaceId(spaceId));
    await requireSpace(context, spaceId);
    const held = await lockSpace(context, spaceId, caller, 'export', { waitMs: LOCK_WAIT_MS });
    let done: (manifest: Manifest) => void = () => undefined;
    const manifest = new Promise<Manifest>((resolve) => (done = resolve));
    async function* entries(): AsyncGenerator<ArchiveEntry> {
      try {
        const files: ManifestFile[] = [];
        const paths = await spacePaths(context, spaceId);
        const passed = tally('reading', paths.length, options.onProgress);
        for await (const { path, body } of readSpace(context, spaceId, paths, files)) {
          passed(body);
          yield { path: `${spaceId}/${path}`, body };
        }
        const result = manifestOf(context, spaceId, '', files);
        done(result);
        yield { path: MANIFEST_ENTRY, body: Buffer.from(`${JSON.stringify(result, null, 2)}\n`) };
      } finally {
        await held.release();
      }
    }
    return { stream: packArchive(entries(), context.clock()), manifest };
  };

  return {
    exportStream,

    async create(caller: Caller, input: { space_id: string; description?: string }) {
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
    },

    async list(caller: Caller, input: { space_id?: string }) {
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
            const manifest = await loadManifest(backupId);
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
    },

    /**
     * Recreates a backup's space, or, with `as`, a new space holding the same content under another
     * id (a copy beside the space that still exists). Everything is checked before anything is written.
     */
    async restore(caller: Caller, input: { backup_id: string; confirm?: boolean; as?: string }) {
      const { spaceId, stamp } = parseBackupId(input.backup_id);
      authorize(caller, 'admin', spaceId);
      const as = input.as === undefined || input.as === '' ? undefined : input.as;
      const target = as === undefined ? spaceId : validateSpaceId(as);
      authorize(caller, 'admin', target);
      const what = target === spaceId ? `recreates space '${spaceId}'` : `creates space '${target}' from space '${spaceId}'`;
      if (input.confirm !== true) throw unconfirmed(`restoring backup '${input.backup_id}' ${what}`);
      const manifest = await loadManifest(input.backup_id);
      // Restored exactly, secrets check included (LIVE_MEM_REDACT applies to imports, not here): the
      // backup was taken from this store, of what its writes had already let through.
      // A backup in the store is input like an archive: only a space's content is restored.
      const damaged = (why: string) => invalid(`backup '${input.backup_id}' is damaged: ${why}; nothing restored`, { backup_id: input.backup_id });
      for (const file of manifest.files) {
        const reason = whyNotContent(file.path);
        if (reason) throw damaged(`${file.path} ${reason}`);
      }
      await requireAbsent(target, target === spaceId ? `restore the backup as a new space with ${RESTORE_AS}` : 'pick another space id');
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
    },

    /** A stored backup as a tar.gz stream (the same archive format as an export). */
    async downloadStream(caller: Caller, input: { backup_id: string }, options: TransferOptions = {}): Promise<{ stream: Readable; manifest: Manifest }> {
      const { spaceId, stamp } = parseBackupId(input.backup_id);
      authorize(caller, 'read', spaceId);
      const manifest = await loadManifest(input.backup_id);
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
        const archive = await toBase64(stream, `backup '${input.backup_id}'`, `npx live-mem backup download ${input.backup_id} -o backup.tar.gz`);
        return { status: 'ok' as const, backup_id: input.backup_id, space_id: manifest.space_id, ...archive, files_count: manifest.files.length };
      }, busy);
    },

    async delete(caller: Caller, input: { backup_id: string; confirm?: boolean }) {
      const { spaceId, stamp } = parseBackupId(input.backup_id);
      authorize(caller, 'admin', spaceId);
      if (input.confirm !== true) throw unconfirmed(`deleting backup '${input.backup_id}' cannot be undone`);
      await loadManifest(input.backup_id);
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
        const { stream, manifest } = await exportStream(caller, input.space_id);
        const archive = await toBase64(stream, `space '${input.space_id}'`, `npx live-mem export ${input.space_id} -o ${input.space_id}.tar.gz`);
        return { status: 'ok' as const, space_id: input.space_id, ...archive, files_count: (await manifest).files.length };
      }, busy);
    },

    /**
     * Imports an archive (read twice: once to verify everything, once to write), as its own space or
     * under `as`. Nothing is written unless the whole archive checks out.
     */
    async importArchive(caller: Caller, open: () => AsyncIterable<Buffer>, options: { as?: string } & TransferOptions = {}) {
      // In this first pass, before anything is written: a bank file past the size cap refuses the
      // import, and with LIVE_MEM_REDACT=refuse so does a secret.
      const inspect = (path: string, body: Buffer) => {
        const relative = path.slice(path.indexOf('/') + 1);
        if (/^(bank\/[^/]+\.md|_synthesis\.md)$/.test(relative) && body.length > context.limits.bankFileMaxBytes) {
          checkBankFileSize(relative, body.toString('utf8'), context.limits.bankFileMaxBytes);
        }
        if (context.redact === 'refuse') redactImported(relative, body, 'refuse');
      };
      const manifest = await verifyArchive(open, importCaps(context.limits), options.onProgress, inspect);
      const spaceId = validateSpaceId(options.as ?? manifest.space_id);
      authorize(caller, 'admin', spaceId);
      await requireAbsent(spaceId, 'import it under another space id');
      const prefix = `${manifest.space_id}/`;
      const passed = tally('writing', manifest.files.length, options.onProgress);
      // The archive is read again to write it: each entry must be one the first pass verified, or a
      // file changed in between could bring in what the verification refused.
      const verified = new Map(manifest.files.map((file) => [prefix + file.path, file]));
      const redacted: FileRedaction[] = [];
      const restored = await writeSpace(context, caller, spaceId, async (write) => {
        await readArchive(
          open(),
          async ({ path, body }) => {
            if (path === MANIFEST_ENTRY) return;
            const file = verified.get(path);
            if (!file || file.size !== body.length || file.sha256 !== sha256(body)) {
              throw invalid(`the archive changed while it was imported (${JSON.stringify(path)} differs from what was verified); nothing imported`);
            }
            verified.delete(path);
            passed(body);
            const relative = path.slice(prefix.length);
            // Verified as the archive holds it; line endings normalised and secrets masked in what is written (redact/redact.ts).
            const masked = redactImported(relative, importedBody(relative, body), context.redact);
            if (masked.report) redacted.push(masked.report);
            await write(relative, renamed(relative, masked.body, spaceId));
          },
          importCaps(context.limits),
        );
        if (verified.size > 0) throw invalid('the archive changed while it was imported (files verified are gone); nothing imported');
      });
      return {
        status: 'ok' as const,
        space_id: spaceId,
        from_space: manifest.space_id,
        files_restored: restored,
        total_size: manifest.total_size,
        checksums_verified: manifest.files.length,
        ...(redacted.length > 0 ? { redacted_files: redacted } : {}),
      };
    },
  };
}

export type BackupService = ReturnType<typeof createBackupService>;
