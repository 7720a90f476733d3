import { boundedTasks, mapOrdered } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { openBatch } from '../../storage/batch.js';
import { listKeys } from '../../storage/list.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { claimNewSpace } from '../space/claim.js';
import { FORMAT, FORMAT_VERSION, sha256, totalSize, type Manifest, type ManifestFile } from '../backup-manifest.js';
import { internalState, whyNotContent } from './space-content.js';

/**
 * A space read as a snapshot (its content files, hashed as they pass, and their manifest) and a
 * snapshot written as a new space: what backups, exports, restores and imports share (backup-service.ts).
 */

/**
 * The space's content files, as paths relative to its folder: what an import accepts, so every
 * archive live-mem writes imports. Internal state is left out as always; anything else (a file
 * put there by hand) is left out with a warning, rather than making the archive one that no
 * import would take.
 */
export async function spacePaths(context: CoreContext, spaceId: string): Promise<string[]> {
  const root = spaceKeys(spaceId).root;
  return (await listKeys(context.storage, root))
    .map((key) => key.slice(root.length))
    .filter((path) => {
      const reason = whyNotContent(path);
      if (reason && !internalState(path)) context.logger.warn(`left out of the snapshot of '${spaceId}': ${path} ${reason}`);
      return reason === undefined;
    });
}

/** Reads the space's files once each, in path order, reading ahead; hashes them as they pass. */
export async function* readSpace(
  context: CoreContext,
  spaceId: string,
  paths: string[],
  files: ManifestFile[],
): AsyncGenerator<{ path: string; body: Buffer }> {
  const { storage } = context;
  const root = spaceKeys(spaceId).root;
  for await (const object of mapOrdered(paths, storage.parallelism * 4, (path) => storage.get(root + path))) {
    if (!object) continue; // gone since listed: only space_delete can do that under the lease
    const path = object.key.slice(root.length);
    files.push({ path, size: object.size, sha256: sha256(object.body) });
    yield { path, body: object.body };
  }
}

/** The manifest of a snapshot of `files`, written now. */
export const manifestOf = (context: CoreContext, spaceId: string, description: string, files: ManifestFile[]): Manifest => ({
  format: FORMAT,
  format_version: FORMAT_VERSION,
  live_mem_version: context.version,
  space_id: spaceId,
  created_at: context.clock().toISOString(), // the archive's own record: ordered to the millisecond
  description,
  files,
  total_size: totalSize(files),
});

/**
 * Writes a verified snapshot as a new space, under the claim of its id (see claimNewSpace): every
 * file but `_meta.json` in one write batch, flushed, then the meta, create-only: it is what makes
 * the space exist. On failure the files written are removed, so no half-restored space is left
 * behind; after a crash, the next claim of the id removes them.
 */
export async function writeSpace(
  context: CoreContext,
  caller: Caller,
  spaceId: string,
  feed: (write: (path: string, body: Buffer) => Promise<void>) => Promise<void>,
): Promise<number> {
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const held = await claimNewSpace(context, spaceId, caller, 'restore');
  const batch = openBatch(storage);
  const tasks = boundedTasks(storage.parallelism);
  const written: string[] = [];
  let meta: Buffer | undefined;
  try {
    await feed(async (path, body) => {
      if (path === '_meta.json') {
        meta = body;
        return;
      }
      written.push(keys.root + path);
      await tasks.run(() => batch.put(keys.root + path, body));
    });
    await tasks.drain();
    if (!meta) throw invalid('the snapshot has no _meta.json');
    await batch.flush();
    await storage.put(keys.meta, meta, { ifNoneMatch: '*', contentType: 'application/json' });
    return written.length + 1;
  } catch (error) {
    await tasks.drain().catch(() => undefined); // let writes in flight land before removing them
    await storage.deleteMany(written).catch((cleanup: unknown) => context.logger.error('could not remove a failed restore', { error: String(cleanup) }));
    if (isLiveMemError(error, 'precondition_failed'))
      throw new LiveMemError('already_exists', `space '${spaceId}' was created while restoring; nothing restored`, { space_id: spaceId });
    throw error;
  } finally {
    await held.release();
  }
}
