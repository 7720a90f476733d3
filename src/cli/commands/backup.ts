import { createReadStream, createWriteStream } from 'node:fs';
import { link, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TransferProgress } from '../../core/backup/transfer-progress.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';
import { formatBytes, percent, type ProgressLine } from '../progress.js';

/**
 * Refuses an output whose folder does not exist, or a file already there (unless `force`), before
 * anything is read (an export holds the space's lease).
 */
async function checkOutput(file: string, force: boolean): Promise<void> {
  if (file === '-') return;
  const dir = path.dirname(path.resolve(file));
  const found = await stat(dir).catch(() => null);
  if (!found?.isDirectory()) throw new LiveMemError('not_found', `no such folder: ${dir}`, { path: dir });
  if (!force && (await stat(file).catch(() => null))) throw exists(file);
}

const exists = (file: string) => invalid(`${path.resolve(file)} already exists: give another --output, or --force to replace it`, { path: path.resolve(file) });

/**
 * Writes an archive stream to `file` (through a temp file renamed at the end, so a failed export
 * leaves no partial archive), or to stdout with '-'. Returns null for stdout: nothing else may be
 * printed there.
 */
async function save(stream: Readable, file: string, force: boolean): Promise<{ file: string; archive_size: number } | null> {
  if (file === '-') {
    await pipeline(stream, process.stdout, { end: false });
    return null;
  }
  const target = path.resolve(file);
  const temp = `${target}.${process.pid}.partial`;
  try {
    await pipeline(stream, createWriteStream(temp, { flags: 'wx' }));
    if (force) await rename(temp, target);
    else await link(temp, target).catch((error: NodeJS.ErrnoException) => Promise.reject(error.code === 'EEXIST' ? exists(file) : error)); // never replaces a file made meanwhile
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await rm(temp, { force: true }); // after a link, the archive's second name
  return { file: target, archive_size: (await stat(target)).size };
}

/** "export demo · 40% · 120/300 files, 1.2 MB"; "import a.tar.gz · writing 40% · …". */
const showTransfer = (progress: ProgressLine, label: string) => (event: TransferProgress) => {
  const phase = event.phase === 'reading' ? '' : `${event.phase} `;
  const share = percent(event.files_done, event.files_total);
  const files = `${event.files_done}${event.files_total ? `/${event.files_total}` : ''} files, ${formatBytes(event.bytes)}`;
  progress.update(`${label} · ${phase}${share ? `${share} · ` : ''}${files}`);
};

export async function exportSpace({ core, caller, progress }: Session, spaceId: string, options: { output?: string; force?: boolean }) {
  const output = options.output ?? `${spaceId}.tar.gz`;
  await checkOutput(output, options.force === true);
  const { stream, manifest } = await core.backups.exportStream(caller, spaceId, { onProgress: showTransfer(progress, `export ${spaceId}`) });
  const saved = await save(stream, output, options.force === true);
  const { files } = await manifest;
  return saved && { status: 'ok' as const, space_id: spaceId, ...saved, files_count: files.length };
}

export async function importSpace({ core, caller, progress }: Session, file: string, options: { as?: string }) {
  const found = await stat(file); // a missing file fails here, before anything else
  if (!found.isFile()) throw invalid(`${file} is not a file: give the .tar.gz archive itself`);
  let read = 0;
  async function* open(): AsyncGenerator<Buffer> {
    read = 0;
    for await (const chunk of createReadStream(file)) {
      read += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  }
  const show = showTransfer(progress, `import ${path.basename(file)}`);
  // While verifying, the archive's own bytes tell how far: the manifest with the file count comes last.
  const onProgress = (event: TransferProgress) =>
    event.files_total === null
      ? progress.update(`import ${path.basename(file)} · verifying ${percent(read, found.size)} · ${event.files_done} files`)
      : show(event);
  return core.backups.importArchive(caller, open, { ...(options.as !== undefined ? { as: options.as } : {}), onProgress });
}

export const backupCreate = ({ core, caller }: Session, spaceId: string, options: { description?: string }) =>
  core.backups.create(caller, { space_id: spaceId, ...(options.description !== undefined ? { description: options.description } : {}) });

export const backupList = ({ core, caller }: Session, spaceId: string | undefined) =>
  core.backups.list(caller, spaceId !== undefined ? { space_id: spaceId } : {});

export const backupRestore = ({ core, caller }: Session, backupId: string, options: { yes?: boolean; as?: string }) =>
  core.backups.restore(caller, { backup_id: backupId, confirm: options.yes === true, ...(options.as !== undefined ? { as: options.as } : {}) });

export async function backupDownload({ core, caller, progress }: Session, backupId: string, options: { output?: string; force?: boolean }) {
  const output = options.output ?? `${backupId.replace('/', '-')}.tar.gz`;
  await checkOutput(output, options.force === true);
  const { stream, manifest } = await core.backups.downloadStream(
    caller,
    { backup_id: backupId },
    { onProgress: showTransfer(progress, `download ${backupId}`) },
  );
  const saved = await save(stream, output, options.force === true);
  return saved && { status: 'ok' as const, backup_id: backupId, ...saved, files_count: manifest.files.length };
}

export const backupDelete = ({ core, caller }: Session, backupId: string, options: { yes?: boolean }) =>
  core.backups.delete(caller, { backup_id: backupId, confirm: options.yes === true });

export const exportCommand: CommandDef = {
  name: 'export <space_id>',
  description: 'write a space to a .tar.gz archive (with a manifest of checksums)',
  options: [
    { flags: '-o, --output <file>', description: 'the archive to write; "-" for standard output (default: <space_id>.tar.gz)' },
    { flags: '-f, --force', description: 'replace the output file if it exists' },
  ],
  run: exportSpace,
  examples: ['live-mem export my-project -o my-project.tar.gz'],
};

export const importCommand: CommandDef = {
  name: 'import <file>',
  description: 'create a space from an archive made by export or backup download (verified before anything is written)',
  options: [{ flags: '--as <space_id>', description: 'import under another space id' }],
  run: importSpace,
  examples: ['live-mem import my-project.tar.gz --as my-project-copy'],
};

export const backupCommands: CommandDef = {
  name: 'backup',
  description: 'snapshots of a space kept in the store',
  commands: [
    {
      name: 'create <space_id>',
      description: 'take a consistent snapshot',
      options: [{ flags: '-d, --description <text>', description: 'why this backup' }],
      run: backupCreate,
      examples: ['live-mem backup create my-project -d "before the migration"'],
    },
    { name: 'list [space_id]', description: 'backups, newest first', run: backupList, view: 'backups' },
    {
      name: 'restore <backup_id>',
      description: 'recreate a deleted space from a backup, or copy it into a new space with --as',
      options: [
        { flags: '--as <space_id>', description: 'restore into this new space id (the space must not exist)' },
        { flags: '-y, --yes', description: 'confirm' },
      ],
      run: backupRestore,
      examples: [
        'live-mem backup restore my-project/2026-01-31T09-00-00-ab12cd --yes',
        'live-mem backup restore my-project/2026-01-31T09-00-00-ab12cd --as my-project-before --yes',
      ],
    },
    {
      name: 'download <backup_id>',
      description: 'write a backup to a .tar.gz archive',
      options: [
        { flags: '-o, --output <file>', description: 'the archive to write; "-" for standard output' },
        { flags: '-f, --force', description: 'replace the output file if it exists' },
      ],
      run: backupDownload,
    },
    { name: 'delete <backup_id>', description: 'delete a backup for good', options: [{ flags: '-y, --yes', description: 'confirm' }], run: backupDelete },
  ],
};
