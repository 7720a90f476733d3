import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { parseNoteName } from '../note-name.js';

/**
 * What a forget takes out of the job records (core/jobs.ts) of consolidations and summaries: the text
 * they may quote of its notes. Run by the forget as it rolls forward (forget.ts), and by a job saved
 * after a forget it could have missed (jobs.ts).
 */

/** Strings of a job record that are no text: ids, states, times, names of what ran. */
const PLAIN_FIELDS = new Set([
  'job_id',
  'space_id',
  'state',
  'status',
  'phase',
  'started_at',
  'updated_at',
  'runner',
  'strategy',
  'consolidations',
  'recovered',
  'pending',
  'id',
  'action',
]);
/** What a forget leaves of a job record's words (messages, warnings, errors). */
export const TEXT_REMOVED = '(removed by a forget: it may have quoted a forgotten note)';

/**
 * A job record without the text it may hold of notes: its messages, warnings and errors (a refused
 * plan's warning quotes the line it refused, a note's words) are replaced by TEXT_REMOVED; ids,
 * states, times, counts and the names of notes not in `gone` stay, those in `gone` go. Generic over
 * the record's shape (consolidation and summaries jobs alike, and fields added later): a string is
 * kept only when it is known to be no text. Applied twice, it changes nothing more.
 */
export function withoutText(value: unknown, gone: ReadonlySet<string>, field = ''): unknown {
  if (typeof value === 'string') {
    if (PLAIN_FIELDS.has(field) || value === TEXT_REMOVED) return value;
    return parseNoteName(value) !== null && !value.includes(' ') ? value : TEXT_REMOVED;
  }
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value) {
      if (typeof item === 'string' && gone.has(item)) continue;
      const clean = withoutText(item, gone, field);
      if (clean === TEXT_REMOVED && kept[kept.length - 1] === TEXT_REMOVED) continue;
      kept.push(clean);
    }
    return kept;
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutText(item, gone, key)]));
  }
  return value;
}

/**
 * Cleans the job records in `folder` (a forget: `gone` are the notes it removes) with withoutText;
 * one that does not parse is deleted (it may hold anything, and shows as nothing anyway). Returns
 * the keys rewritten or deleted (without `apply`: that would be). Idempotent.
 */
export async function scrubJobs(context: CoreContext, folder: string, gone: ReadonlySet<string>, apply = true): Promise<string[]> {
  const { storage } = context;
  const keys: string[] = [];
  for await (const object of listAll(storage, folder)) if (object.key.endsWith('.json')) keys.push(object.key);
  const changed = await mapLimit(keys, storage.parallelism, async (key) => {
    const object = await storage.get(key);
    if (!object) return null;
    let record: unknown;
    try {
      record = JSON.parse(object.body.toString('utf8'));
    } catch {
      if (apply) await storage.delete(key);
      return key;
    }
    const clean = `${JSON.stringify(withoutText(record, gone), null, 2)}\n`;
    if (clean === object.body.toString('utf8') || clean === `${JSON.stringify(record, null, 2)}\n`) return null;
    if (apply) await storage.put(key, clean, { contentType: 'application/json' });
    return key;
  });
  return changed.filter((key): key is string => key !== null);
}
