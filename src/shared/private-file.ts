import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * How the CLI writes a file of the user's that may hold a secret (a client's configuration with a
 * token, live-mem.yaml with an API key, a backup of either): never through a name someone else chose.
 * In a folder others may write (a project shared by a team, /tmp), a name that can be guessed
 * (`<file>.tmp-<pid>`) can be created first by another user, as a file they own and can read, or as
 * a link to a file of theirs: a plain open would write the secret into it. Here every new file is
 * created under a random name with O_CREAT|O_EXCL|O_NOFOLLOW, which fails on anything already at the
 * name, a link included; it gets its mode from the descriptor, never by name, before a byte is
 * written; it is renamed over the target only once whole and on disk.
 */

/** A file's mode, exactly: 0600 for one holding a secret. */
export interface PrivateWrite {
  mode: number;
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Creates `file`, which must not exist (nor a link at its name), with `mode` exactly, and writes `data` into it, synced. */
export async function createExclusive(file: string, data: string | Buffer, { mode }: PrivateWrite): Promise<void> {
  const handle = await open(file, CREATE, mode & 0o600);
  try {
    // The umask only narrows a new file's mode; chmod through the descriptor sets what is asked, the name playing no part.
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(file, { force: true });
    throw error;
  }
  await handle.close();
}

/**
 * Replaces `target` with `data` at `mode`: written whole to a new file of a random name beside it
 * (created as `createExclusive` does), then renamed over it, so a crash leaves the old file or the
 * new one. A link at `target` itself is replaced, not followed: resolve it first to write where it points.
 */
export async function replaceFile(target: string, data: string | Buffer, options: PrivateWrite): Promise<void> {
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(9).toString('base64url')}.tmp`);
  await createExclusive(temporary, data, options);
  try {
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
