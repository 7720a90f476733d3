import { createHash } from 'node:crypto';
import { invalid } from '../shared/errors.js';

/**
 * What a backup or an export holds: every file of the space (paths relative to the space's folder)
 * with its size and SHA-256, so a restore can prove it restores exactly.
 */
export const FORMAT = 'live-mem-backup';
export const FORMAT_VERSION = 1;
/** The manifest's entry in an archive, after every file of the space. */
export const MANIFEST_ENTRY = 'manifest.json';

export const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  live_mem_version: string;
  space_id: string;
  created_at: string;
  description: string;
  files: ManifestFile[];
  total_size: number;
}

/** What a manifest's `total_size` says: the sum of its files' sizes. */
export const totalSize = (files: readonly ManifestFile[]): number => files.reduce((sum, file) => sum + file.size, 0);

/**
 * The one reader of a manifest (a backup's, an archive's): what a restore verifies against and what a
 * forget's purge rewrites. Throws `invalid_input` naming `where`.
 */
export function parseManifest(text: string, where: string): Manifest {
  let raw: Partial<Manifest>;
  try {
    raw = JSON.parse(text) as Partial<Manifest>;
  } catch {
    throw invalid(`${where}: the manifest is not valid JSON`);
  }
  if (raw.format !== FORMAT) throw invalid(`${where}: not a live-mem backup (format ${JSON.stringify(raw.format)})`);
  if (raw.format_version !== FORMAT_VERSION) {
    throw invalid(`${where}: unknown format version ${JSON.stringify(raw.format_version)} (this live-mem reads version ${FORMAT_VERSION}); upgrade live-mem`);
  }
  if (typeof raw.space_id !== 'string' || !Array.isArray(raw.files)) throw invalid(`${where}: the manifest lacks space_id or files`);
  for (const file of raw.files) {
    if (typeof file?.path !== 'string' || typeof file.size !== 'number' || !/^[0-9a-f]{64}$/.test(String(file.sha256))) {
      throw invalid(`${where}: a manifest entry is malformed: ${JSON.stringify(file).slice(0, 120)}`);
    }
  }
  return raw as Manifest;
}
