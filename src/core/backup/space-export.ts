import type { Readable } from 'node:stream';
import { authorize, type Caller } from '../caller.js';
import { MANIFEST_ENTRY, type Manifest, type ManifestFile } from '../backup-manifest.js';
import { lockSpace } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { packArchive, type ArchiveEntry } from './archive.js';
import { manifestOf, readSpace, spacePaths } from './space-snapshot.js';
import { tally, type TransferOptions } from './transfer-progress.js';

/** A backup or export waits this long for a running consolidation to finish before giving up. */
export const LOCK_WAIT_MS = 120_000;

/** A tar.gz stream of a space taken under its lease (released when the stream ends or fails). */
export async function exportStream(
  context: CoreContext,
  caller: Caller,
  spaceId: string,
  options: TransferOptions = {},
): Promise<{ stream: Readable; manifest: Promise<Manifest> }> {
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
}
