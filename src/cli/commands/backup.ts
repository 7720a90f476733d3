import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Session } from '../open.js';

/**
 * Writes an archive stream to `file` (through a temp file renamed at the end, so a failed export
 * leaves no partial archive), or to stdout with '-'. Returns null for stdout: nothing else may be
 * printed there.
 */
async function save(stream: Readable, file: string): Promise<{ file: string; archive_size: number } | null> {
  if (file === '-') {
    await pipeline(stream, process.stdout, { end: false });
    return null;
  }
  const target = path.resolve(file);
  const temp = `${target}.${process.pid}.partial`;
  try {
    await pipeline(stream, createWriteStream(temp, { flags: 'wx' }));
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return { file: target, archive_size: (await stat(target)).size };
}

export async function exportSpace({ core, caller }: Session, spaceId: string, options: { output?: string }) {
  const { stream, manifest } = await core.backups.exportStream(caller, spaceId);
  const saved = await save(stream, options.output ?? `${spaceId}.tar.gz`);
  const { files } = await manifest;
  return saved && { status: 'ok' as const, space_id: spaceId, ...saved, files_count: files.length };
}

export const importSpace = ({ core, caller }: Session, file: string, options: { as?: string }) =>
  core.backups.importArchive(caller, () => createReadStream(file), options.as !== undefined ? { as: options.as } : {});

export const backupCreate = ({ core, caller }: Session, spaceId: string, options: { description?: string }) =>
  core.backups.create(caller, { space_id: spaceId, ...(options.description !== undefined ? { description: options.description } : {}) });

export const backupList = ({ core, caller }: Session, spaceId: string | undefined) =>
  core.backups.list(caller, spaceId !== undefined ? { space_id: spaceId } : {});

export const backupRestore = ({ core, caller }: Session, backupId: string, options: { yes?: boolean }) =>
  core.backups.restore(caller, { backup_id: backupId, confirm: options.yes === true });

export async function backupDownload({ core, caller }: Session, backupId: string, options: { output?: string }) {
  const { stream, manifest } = await core.backups.downloadStream(caller, { backup_id: backupId });
  const saved = await save(stream, options.output ?? `${backupId.replace('/', '-')}.tar.gz`);
  return saved && { status: 'ok' as const, backup_id: backupId, ...saved, files_count: manifest.files.length };
}

export const backupDelete = ({ core, caller }: Session, backupId: string, options: { yes?: boolean }) =>
  core.backups.delete(caller, { backup_id: backupId, confirm: options.yes === true });
