/**
 * `space_delete`: every file of a space erased. Its own module because a store without folder removal
 * (S3) needs an ordered delete and a late sweep, whose timing is tied to how long notes trust a meta.
 */
import { unconfirmed } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import type { SpaceChanged } from './space-ports.js';

/** Deletes the space `input` names (admins only, `confirm: true` required), then tells `changed`. */
export async function deleteSpace(context: CoreContext, changed: SpaceChanged, caller: Caller, input: { space_id: string; confirm?: boolean }) {
  const { storage } = context;
  const spaceId = validateSpaceId(input.space_id);
  authorize(caller, 'admin', spaceId);
  if (input.confirm !== true) throw unconfirmed(`deleting space '${spaceId}' erases all its notes and bank`);
  await requireSpace(context, spaceId);
  const keys = spaceKeys(spaceId);
  let deleted: number;
  if (storage.removeFolder) {
    // One step (fs): the space is gone at once, and a note written into it from now on fails.
    deleted = await storage.removeFolder(keys.root);
  } else {
    // The meta goes last: a delete cut short leaves a space that still exists and can be deleted
    // again. Then, once no process can still trust the meta it saw (notes trust it for
    // `knownSpaceMs`, see note/note-create.ts), one more sweep takes the notes that landed meanwhile.
    const all = await listKeys(storage, keys.root);
    await storage.deleteMany(all.filter((key) => key !== keys.meta));
    await storage.delete(keys.meta);
    await new Promise((resolve) => setTimeout(resolve, context.limits.knownSpaceMs * 1.1 + 100));
    const late = await listKeys(storage, keys.root);
    await storage.deleteMany(late);
    deleted = all.length + late.length;
  }
  changed({ type: 'space_deleted', space_id: spaceId });
  return { status: 'deleted' as const, space_id: spaceId, files_deleted: deleted };
}
