import { invalid } from '../../shared/errors.js';
import type { Limits } from '../context.js';
import { readArchive, type ArchiveCaps } from './archive.js';
import { MANIFEST_ENTRY, parseManifest, sha256, type Manifest } from '../backup-manifest.js';
import { whyNotContent, whyNotMeta } from './space-content.js';
import { tally, type TransferOptions } from './transfer-progress.js';

/** The caps every pass over an archive being imported reads it under. */
export const importCaps = (limits: Limits): ArchiveCaps => ({ maxEntryBytes: limits.importMaxEntryBytes, maxTotalBytes: limits.importMaxBytes });

/**
 * Verifies an archive in full without writing anything: its entries, its manifest and every
 * checksum, that it holds a space's content and nothing else (space-content.ts), and a `_meta.json`
 * that is a JSON object. Returns the manifest, which the writing pass holds each entry to.
 */
export async function verifyArchive(
  open: () => AsyncIterable<Buffer>,
  caps: ArchiveCaps,
  onProgress?: TransferOptions['onProgress'],
  /** Sees every entry but the manifest as it passes; may throw to refuse the archive. */
  inspect?: (path: string, body: Buffer) => void,
): Promise<Manifest> {
  const seen = new Map<string, { size: number; sha256: string }>();
  const metas = new Map<string, string | undefined>(); // each `{folder}/_meta.json` → why it is no meta
  let manifestText: string | undefined;
  const passed = tally('verifying', null, onProgress);
  await readArchive(
    open(),
    async ({ path, body }) => {
      passed(body);
      if (path === MANIFEST_ENTRY) manifestText = body.toString('utf8');
      else if (seen.has(path)) throw invalid(`the archive holds ${JSON.stringify(path)} twice`);
      else {
        seen.set(path, { size: body.length, sha256: sha256(body) });
        inspect?.(path, body);
      }
      if (/^[^/]+\/_meta\.json$/.test(path)) metas.set(path, whyNotMeta(body));
    },
    caps,
  );
  if (manifestText === undefined) throw invalid('the archive has no manifest.json: not a live-mem export, or cut short');
  const manifest = parseManifest(manifestText, 'the archive');
  const prefix = `${manifest.space_id}/`;
  // In archive order, so the message names the first offending entry.
  for (const path of seen.keys()) {
    if (!path.startsWith(prefix)) throw invalid(`the archive holds ${JSON.stringify(path)}, outside space '${manifest.space_id}'`);
    const reason = whyNotContent(path.slice(prefix.length));
    if (reason) throw invalid(`invalid archive: ${JSON.stringify(path)} ${reason}`, { entry: path });
  }
  const metaProblem = metas.get(`${prefix}_meta.json`);
  if (metaProblem) throw invalid(`invalid archive: _meta.json ${metaProblem} (a space's metadata is a JSON object)`);
  for (const file of manifest.files) {
    const found = seen.get(prefix + file.path);
    if (!found) throw invalid(`the archive lacks ${file.path}, listed in its manifest`);
    if (found.size !== file.size || found.sha256 !== file.sha256) throw invalid(`checksum mismatch for ${file.path}: the archive is corrupt`);
  }
  if (seen.size !== manifest.files.length) throw invalid('the archive holds files its manifest does not list');
  if (!manifest.files.some((file) => file.path === '_meta.json')) throw invalid('the archive has no _meta.json');
  return manifest;
}
