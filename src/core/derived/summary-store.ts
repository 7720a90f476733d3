import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { MAX_LEVEL, parseRecord, SUMMARY_ID, type SummaryRecord } from './summary-record.js';

/** A stored summary with the version it was read at (for compare-and-swap). */
export interface Loaded {
  record: SummaryRecord;
  etag: string;
}

/** One level as stored: the summaries that parse, and the objects that do not (to be rebuilt). */
export interface StoredLevel {
  records: Map<string, Loaded>;
  /** id → etag of objects at this level that are not a valid summary. */
  corrupt: Map<string, string>;
}

const KEY = /^L(\d)\/([^/]+)\.json$/;

/**
 * Every summary of a space, by level, from one listing of `_summaries/`. An object that does not
 * parse is logged and set aside: planning treats what it claimed to cover as uncovered.
 */
export async function loadSummaries(context: CoreContext, spaceId: string): Promise<Map<number, StoredLevel>> {
  const { storage } = context;
  const root = spaceKeys(spaceId).summaries;
  const found: Array<{ key: string; level: number; id: string }> = [];
  for await (const object of listAll(storage, root)) {
    const match = KEY.exec(object.key.slice(root.length));
    if (!match) continue;
    const level = Number(match[1]);
    const id = match[2] as string;
    if (level >= 1 && level <= MAX_LEVEL && SUMMARY_ID.test(id)) found.push({ key: object.key, level, id });
  }
  const levels = new Map<number, StoredLevel>();
  for (let level = 1; level <= MAX_LEVEL; level++) levels.set(level, { records: new Map(), corrupt: new Map() });
  await mapLimit(found, storage.parallelism, async ({ key, level, id }) => {
    const object = await storage.get(key);
    if (!object) return; // deleted since listed
    const stored = levels.get(level) as StoredLevel;
    const record = parseRecord(object.body, { level, id });
    if (record) stored.records.set(id, { record, etag: object.etag });
    else {
      stored.corrupt.set(id, object.etag);
      context.logger.warn(`summary ${key} is not a valid summary: skipped, and rebuilt by the next summaries update`);
    }
  });
  return levels;
}
