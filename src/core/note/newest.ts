import { listAll } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { baseName, spaceKeys } from '../layout.js';
import { compareNewestFirst, parseNoteName, stampToIso, toStamp, type NoteName } from '../note-name.js';
import { isForgetId } from '../commit/history-record.js';
import type { Corpus, Level0Note, Level0Text } from './corpus.js';

/**
 * The "newest N" paths (live_read, memory_context's recent notes) cost what they are asked, not
 * what the space holds: note names start with their time, and every driver lists keys in order
 * from any point (`startAfter`), so the newest notes are the end of a listing that starts a little
 * before now. No listing of the whole folder, no sort of every name:
 * - S3 lists only the keys after that point (one request per thousand, from there on);
 * - fs reads its folder (a directory has no order to start from) but sorts and returns only those.
 * A window that holds too few reaches further back, eight times further each time, then to the start.
 */
const NEWEST_WINDOW_MS = 60 * 60 * 1000;
const NEWEST_WINDOW_GROWTH = 8;
const NEWEST_WINDOWS = 6; // the last bounded one reaches 8^5 hours (3.7 years) back
/**
 * How much later than its consolidation's commit a note's stamp may be (its writer's clock ahead
 * of the committer's): a consolidation committed longer than this before a note holds only older ones.
 */
export const COMMIT_SKEW_MS = 60 * 60 * 1000;

export const stampMs = (stamp: string): number => Date.parse(stampToIso(stamp.slice(0, 15)));

export interface NewestLiveOptions {
  keep?: (name: NoteName) => boolean;
  /** Only notes older than this one (the next page). */
  before?: NoteName;
  /** Only notes stamped at or after this stamp (YYYYMMDDTHHMMSS). */
  since?: string;
}

/**
 * Live note names newest first that `keep` accepts: at most `count`, and whether more exist. A
 * forgotten note still in live/ is left out. Notes stamped after the clock (a writer's clock
 * ahead) sort after the starting point, so they are always in the first listing.
 */
export async function newestLive(
  context: CoreContext,
  corpus: Corpus,
  spaceId: string,
  count: number,
  options: NewestLiveOptions = {},
): Promise<{ names: NoteName[]; more: boolean }> {
  await corpus.sync(spaceId);
  const folder = spaceKeys(spaceId).live;
  const forgotten = corpus.forgotten(spaceId).names;
  const { keep = () => true, before, since } = options;
  const anchor = before ? stampMs(before.stamp) + 1000 : context.clock().getTime();
  // `since` is inclusive: a name with that stamp sorts after the bare stamp.
  const floor = since === undefined ? undefined : folder + since;
  const found: NoteName[] = [];
  // Where the previous, newer, listing began; at first, the note a page starts from.
  let end: string | undefined = before ? folder + before.filename : undefined;
  for (let window = 0, span = NEWEST_WINDOW_MS; ; window++, span *= NEWEST_WINDOW_GROWTH) {
    // On the hour, so that calls within an hour list the same window (cached while the folder is unchanged).
    const from = Math.floor((anchor - span) / NEWEST_WINDOW_MS) * NEWEST_WINDOW_MS;
    let start = window < NEWEST_WINDOWS && Number.isFinite(from) ? folder + toStamp(new Date(from)) : undefined;
    if (floor !== undefined && (start === undefined || start <= floor)) start = floor;
    const listWindow = async () => {
      const names: NoteName[] = [];
      for await (const object of listAll(context.storage, folder, start === undefined ? {} : { startAfter: start })) {
        if (end !== undefined && object.key >= end) break;
        const name = parseNoteName(baseName(object.key));
        if (name) names.push(name);
      }
      return names.sort(compareNewestFirst);
    };
    // A page further back (`before`) is listed afresh: caching every page would keep what no one asks again.
    const listed = before ? await listWindow() : await corpus.windowListing(folder, `newest ${window}`, `${start} ${end}`, listWindow);
    for (const name of listed) {
      if (forgotten.has(name.filename) || (before && compareNewestFirst(name, before) <= 0) || !keep(name)) continue;
      found.push(name);
    }
    if (found.length > count || start === undefined || start === floor) return { names: found.slice(0, count), more: found.length > count };
    end = start;
  }
}

/**
 * The newest `count` notes of level 0 with their text, newest first, without listing the space:
 * the newest live notes, then consolidations from the newest back, only while one committed late
 * enough to hold a newer note is left (ids start with their commit stamp). A note both in live/
 * and in a complete consolidation (one cut before the removal from live/) counts as history.
 */
export async function newestNotes(context: CoreContext, corpus: Corpus, spaceId: string, count: number): Promise<Level0Text[]> {
  const { names } = await newestLive(context, corpus, spaceId, count);
  let candidates: Level0Note[] = names.map((name) => ({ ...name, source: 'live' }));
  const ids = await corpus.historyIds(spaceId);
  for (let i = ids.length - 1; i >= 0; i--) {
    const cid = ids[i] as string;
    const oldest = candidates[count - 1];
    if (oldest && stampMs(cid) + COMMIT_SKEW_MS < stampMs(oldest.stamp)) break;
    if (isForgetId(cid)) continue;
    const record = await corpus.record(spaceId, cid).catch((error: unknown) => corpus.skipDamaged('the history', error, null));
    if (record?.kind !== 'consolidation') continue;
    const byName = new Map(candidates.map((note) => [note.filename, note]));
    for (const filename of record.notes) {
      const name = parseNoteName(filename);
      if (name) byName.set(filename, { ...name, source: 'history', consolidation_id: record.id });
    }
    candidates = [...byName.values()].sort(compareNewestFirst).slice(0, count);
  }
  return corpus.read(spaceId, candidates);
}
