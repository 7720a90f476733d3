import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { withoutText } from '../jobs.js';

/**
 * Cleans the job records in `folder` (a forget: `gone` are the notes it removes) with withoutText
 * (jobs.ts, which applies it too to a job saved after a forget it could have missed);
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
