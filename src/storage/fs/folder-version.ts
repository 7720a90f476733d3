import { statfsSync, statSync } from 'node:fs';
import { normalizePrefix } from '../../shared/keys.js';
import { isCode, storageError } from './errors.js';
import { folderPath } from './fs-store.js';

/**
 * A folder's version (StorageDriver.version): its inode and mtime. Every write goes through a temp
 * file in the same folder, so any change to its entries moves its mtime.
 *
 * A folder's mtime is trusted as a version only once it has settled: the kernel stamps mtimes from a
 * coarse clock, so two changes within one tick can share a stamp, and a stamp is vouched for only
 * once the clock has surely moved past its tick. How long that is depends on who stamps:
 * - a local Linux filesystem with sub-second stamps (ext4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs,
 *   bcachefs): the kernel's own coarse clock, one jiffy (1–10 ms) behind the clock Date.now() reads —
 *   FINE_SETTLE_MS is five of the longest jiffy;
 * - anything else — a remote filesystem (NFS, SMB: the server stamps, with its own clock), whole-second
 *   stamps (FAT, old ext4 inodes), another OS: COARSE_SETTLE_MS, as before.
 * Right after a process writes, its reads list the folder again only for FINE_SETTLE_MS, not 2 s: a
 * live_search after 2,000 notes listed and sorted live/ on every call (issue 43).
 */
export const FINE_SETTLE_MS = 50;
export const COARSE_SETTLE_MS = 2_000;

/** Linux statfs magic numbers of local filesystems whose inodes keep nanosecond stamps. */
const FINE_FILESYSTEMS = new Set([
  0xef53, // ext2/3/4 (256-byte inodes keep ns; 128-byte ones whole seconds: the stamp tells, below)
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
]);

/** Whether the filesystem holding `root` is one whose stamps come from this machine's kernel, finely (read once per driver). */
export function localFineStamps(root: string): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return FINE_FILESYSTEMS.has(Number(statfsSync(root).type));
  } catch {
    return false; // not there yet, or no statfs: the safe window
  }
}

/** How long a stamp must be old to be vouched for: the fine window only where the filesystem and the stamp itself show sub-second stamps. */
export function settleMs(fineFilesystem: boolean, mtimeNs: bigint): number {
  return fineFilesystem && mtimeNs % 1_000_000_000n !== 0n ? FINE_SETTLE_MS : COARSE_SETTLE_MS;
}

/** The folder versions of one store's root (whose filesystem is looked up on first use). */
export function createFolderVersions(root: string): (prefix: string) => Promise<string | null> {
  let fine: boolean | undefined;
  return async (prefix) => {
    const folderKey = normalizePrefix(prefix);
    if (!folderKey.endsWith('/')) return null;
    const dir = folderPath(root, folderKey);
    try {
      const stats = statSync(dir, { bigint: true, throwIfNoEntry: false });
      if (!stats) return 'absent';
      fine ??= localFineStamps(root);
      if (Date.now() - Number(stats.mtimeMs) < settleMs(fine, stats.mtimeNs)) return null;
      return `${stats.ino.toString(36)}-${stats.mtimeNs.toString(36)}`;
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ENOTDIR')) return 'absent';
      throw storageError('stat', dir, error);
    }
  };
}
