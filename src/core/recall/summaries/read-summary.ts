import { invalid, LiveMemError } from '../../../shared/errors.js';
import { authorize, type Caller } from '../../caller.js';
import type { CoreContext } from '../../context.js';
import { levelOfId, parseRecord, parseRef, SUMMARY_ID } from '../../derived/summary-record.js';
import { spaceKeys } from '../../layout.js';
import { parseNoteName, stampToIso } from '../../note-name.js';
import { requireSpace } from '../../space-meta.js';
import { validateSpaceId } from '../../validate.js';

/**
 * summaries_read: one summary whole, with what it covers, read straight from the store: the notes of
 * a level-1 summary (file name, time, slice) or the child summaries of a level-k one (their times,
 * or `missing` when a child is gone).
 */
export async function readSummary(context: CoreContext, caller: Caller, input: { space_id: string; summary_id: string }) {
  const spaceId = validateSpaceId(input.space_id);
  authorize(caller, 'read', spaceId);
  const id = input.summary_id;
  const level = typeof id === 'string' && SUMMARY_ID.test(id) ? levelOfId(id) : null;
  if (level === null) throw invalid(`invalid summary_id ${JSON.stringify(id)}: expected L{level}-{YYYYMMDDTHHMMSS}-{id}, as summaries_list shows`);
  await requireSpace(context, spaceId);
  const keys = spaceKeys(spaceId);
  const object = await context.storage.get(keys.summary(level, id));
  if (!object) throw new LiveMemError('not_found', `no summary '${id}' in space '${spaceId}'`, { space_id: spaceId, summary_id: id });
  const record = parseRecord(object.body, { level, id });
  if (!record)
    throw new LiveMemError('storage_error', `summary '${id}' of space '${spaceId}' is corrupt; the next summaries update rebuilds it`, {
      space_id: spaceId,
      summary_id: id,
    });
  if (level === 1) {
    const notes = record.covers.map((ref) => {
      const { filename, slice } = parseRef(ref);
      const name = parseNoteName(filename);
      return { ref, filename, timestamp: name ? stampToIso(name.stamp) : null, ...(slice ? { part: `${slice.i}/${slice.n}` } : {}) };
    });
    return { status: 'ok' as const, space_id: spaceId, summary: record, notes };
  }
  const children = await Promise.all(
    record.covers.map(async (childId) => {
      const child = await context.storage.get(keys.summary(level - 1, childId));
      const parsed = child ? parseRecord(child.body, { level: level - 1, id: childId }) : null;
      return parsed
        ? { id: childId, level: level - 1, sealed: parsed.sealed, range_start: parsed.range_start, range_end: parsed.range_end }
        : { id: childId, level: level - 1, missing: true };
    }),
  );
  return { status: 'ok' as const, space_id: spaceId, summary: record, children };
}
