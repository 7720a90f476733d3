import { LiveMemError } from '../../shared/errors.js';
import type { StorageDriver } from '../../storage/types.js';
import { spaceKeys } from '../layout.js';

/**
 * The space a restore or an import writes: it must not exist yet (checked early here, and again by
 * the claim that creates it), and under another id (`as`) its `_meta.json` is renamed to match.
 */

/** Fails early, before an archive is read twice, if the space exists (the claim checks again). */
export async function requireAbsent(storage: StorageDriver, spaceId: string, otherwise: string): Promise<void> {
  if (await storage.stat(spaceKeys(spaceId).meta)) {
    throw new LiveMemError('already_exists', `space '${spaceId}' exists: delete it first, or ${otherwise}`, { space_id: spaceId });
  }
}

/** `_meta.json` under a new space id, when importing with --as. */
export const renamed = (path: string, body: Buffer, to: string): Buffer =>
  path === '_meta.json' ? Buffer.from(`${JSON.stringify({ ...(JSON.parse(body.toString('utf8')) as object), space_id: to }, null, 2)}\n`) : body;
