import { LiveMemError } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import type { Caller } from '../caller.js';
import { lockSpace, type SpaceLock } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';

/** A creator waits this long for another one (an import of a large space) before `conflict`. */
const CLAIM_WAIT_MS = 30_000;

/**
 * Claims an id for a space about to be built (space_create, an import, a restore): holds the
 * space's lease, so two builders of one id take turns across processes; checks that no space has
 * the id; and removes what an interrupted import left there (files without a `_meta.json` are no
 * space). The builder writes `_meta.json` create-only — it is what makes the space exist — then
 * releases the lease.
 */
export async function claimNewSpace(
  context: CoreContext,
  spaceId: string,
  caller: Caller,
  purpose: string,
  options: { waitMs?: number } = {},
): Promise<SpaceLock> {
  const held = await lockSpace(context, spaceId, caller, purpose, { waitMs: options.waitMs ?? CLAIM_WAIT_MS });
  try {
    const keys = spaceKeys(spaceId);
    if (await context.storage.stat(keys.meta)) {
      throw new LiveMemError('already_exists', `space '${spaceId}' already exists`, { space_id: spaceId });
    }
    const leftovers = (await listKeys(context.storage, keys.root)).filter((key) => key !== keys.lock);
    if (leftovers.length > 0) {
      context.logger.warn(`removing ${leftovers.length} files an interrupted import left in '${spaceId}'`);
      await context.storage.deleteMany(leftovers);
    }
    return held;
  } catch (error) {
    await held.release();
    throw error;
  }
}
