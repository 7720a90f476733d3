/**
 * One watched space's change detection: what it last saw of the space, and one check that compares
 * the store with it and says what changed — whoever changed it, this process or another one on another
 * host. Like the search index's catch-up (recall/feed-*.ts) it reads only what is new: on a driver with
 * folder versions (fs) an idle check is four stats; on S3 it is one HEAD of the space's change
 * marker (change-marker.ts), and only when the marker moved — or a minute passed, for writers that keep
 * none — two small listings, of live/ and history/ from a recent point in their time-ordered names. The
 * bank is compared (etags) only when a commit completed.
 */
import type { StorageDriver } from '../../storage/types.js';
import type { ChangedFile } from '../events.js';
import { spaceChanges, spaceKeys } from '../layout.js';
import { keepsMarkers } from './change-marker.js';
import { toStamp } from '../note-name.js';
import { isStoredBankFilename } from '../validate.js';

/** What the change feed tells its subscribers. Events of one space come in the order detected. */
export type FeedEvent =
  /** Live notes appeared (by anyone), or left live/ (moved out by a commit, forgotten). */
  | { type: 'notes'; space_id: string; added: string[]; removed: string[] }
  /** History entries completed: a consolidation, compaction, correction (revision) or forget committed and applied. */
  | { type: 'committed'; space_id: string; ids: string[] }
  /** Bank files written or deleted, the synthesis or the rules changed (after a commit is fully applied). */
  | { type: 'bank_changed'; space_id: string; files: ChangedFile[]; synthesis: boolean; rules: boolean }
  | { type: 'space_created' | 'space_deleted'; space_id: string };

/**
 * How far back a check lists live/ and history/ (by the time in their names): a note stamped by a
 * host whose clock is this much behind still shows. A note stamped older (an import of old notes)
 * is not announced as new; the commit that later moves it is.
 */
export const WINDOW_MS = 10 * 60 * 1000;

const PARTS = ['root', 'live', 'history', 'bank'] as const;
type Part = (typeof PARTS)[number];

/** A completed history entry: its record written last (commit/record.ts). */
const RECORD = 'record.json';
/** The synthesis and the rules beside the bank's files in one map (no file name starts with NUL). */
const SYNTHESIS_ENTRY = '\0synthesis';
const RULES_ENTRY = '\0rules';

export interface SpaceProbe {
  /**
   * Compares the store with what the last check saw; the first check only takes a baseline. `full`: look
   * past an unchanged marker (a change this process just made, whose marker may not be written yet).
   * Throws what the store throws (state kept: the next check retries).
   */
  check(full?: boolean): Promise<FeedEvent[]>;
}

/** Without folder versions, a space is listed at least this often whatever its marker says: writers that keep no marker (older releases, the Python server, a process that died before writing it) are seen. */
export const FULL_CHECK_MS = 60_000;

/**
 * Whether a store without folder versions changed since `seen` (the marker's etag at the last check
 * that completed): its marker moved, or `fullCheckMs` passed since the last full look. `commit` records
 * what this check saw, once it completed (a check that threw looks again).
 */
export function markerWatch(storage: StorageDriver, marker: string, clock: () => Date, fullCheckMs: number) {
  let seen: string | null | undefined;
  let lastFull = Number.NEGATIVE_INFINITY;
  return {
    async changed(full: boolean): Promise<{ changed: boolean; commit(): void }> {
      const now = clock().getTime();
      const etag = (await storage.stat(marker))?.etag ?? null;
      const changed = full || seen === undefined || etag !== seen || now - lastFull >= fullCheckMs;
      return {
        changed,
        commit: () => {
          seen = etag;
          if (changed) lastFull = now;
        },
      };
    },
  };
}

type Keys = ReturnType<typeof spaceKeys>;

/** The live notes stamped after `from`, by name. */
async function listLive(storage: StorageDriver, keys: Keys, from: string): Promise<Set<string>> {
  const names = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await storage.list(keys.live, { startAfter: `${keys.live}${from}`, ...(cursor ? { cursor } : {}) });
    for (const object of page.objects) {
      const name = object.key.slice(keys.live.length);
      if (name.endsWith('.md') && !name.includes('/')) names.add(name);
    }
    cursor = page.cursor;
  } while (cursor);
  return names;
}

/**
 * The history entries committed after `from` (their ids start with their commit stamp), complete
 * ones only: an entry is complete once its record exists (written last). `known` are complete already;
 * `incomplete` is kept up to date with those listed whose record is not there yet.
 */
async function listHistory(
  storage: StorageDriver,
  keys: Keys,
  from: string,
  known: ReadonlySet<string> | undefined,
  incomplete: Set<string>,
): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await storage.list(keys.history, { delimiter: '/', startAfter: `${keys.history}${from}`, ...(cursor ? { cursor } : {}) });
    for (const prefix of page.prefixes) ids.add(prefix.slice(keys.history.length, -1));
    cursor = page.cursor;
  } while (cursor);
  const complete = new Set<string>();
  for (const id of ids) {
    if (known?.has(id)) complete.add(id);
    else if (await storage.stat(`${keys.history}${id}/${RECORD}`)) {
      complete.add(id);
      incomplete.delete(id);
    } else incomplete.add(id);
  }
  for (const id of incomplete) if (!ids.has(id)) incomplete.delete(id);
  return complete;
}

/** Bank files, the synthesis and the rules by etag ('' for the two when absent). */
async function readBank(storage: StorageDriver, keys: Keys): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  let cursor: string | undefined;
  do {
    const page = await storage.list(keys.bank, { delimiter: '/', ...(cursor ? { cursor } : {}) });
    for (const object of page.objects) {
      const name = object.key.slice(keys.bank.length);
      if (!isStoredBankFilename(name)) continue;
      const etag = object.etag ?? (await storage.stat(object.key))?.etag;
      if (etag !== undefined) files.set(name, etag);
    }
    cursor = page.cursor;
  } while (cursor);
  const [synthesis, rules] = await Promise.all([storage.stat(keys.synthesis), storage.stat(keys.rules)]);
  files.set(SYNTHESIS_ENTRY, synthesis?.etag ?? '');
  files.set(RULES_ENTRY, rules?.etag ?? '');
  return files;
}

/** What changed between two reads of the bank, or null. */
function bankEvent(spaceId: string, before: Map<string, string>, after: Map<string, string>): FeedEvent | null {
  const files: ChangedFile[] = [];
  for (const [name, etag] of after) {
    if (name.startsWith('\0')) continue;
    const old = before.get(name);
    if (old === undefined) files.push({ filename: name, kind: 'created' });
    else if (old !== etag) files.push({ filename: name, kind: 'updated' });
  }
  for (const name of before.keys()) if (!name.startsWith('\0') && !after.has(name)) files.push({ filename: name, kind: 'deleted' });
  const synthesis = before.get(SYNTHESIS_ENTRY) !== after.get(SYNTHESIS_ENTRY);
  const rules = before.get(RULES_ENTRY) !== after.get(RULES_ENTRY);
  return files.length > 0 || synthesis || rules ? { type: 'bank_changed', space_id: spaceId, files, synthesis, rules } : null;
}

export function createSpaceProbe(storage: StorageDriver, spaceId: string, clock: () => Date, fullCheckMs = FULL_CHECK_MS): SpaceProbe {
  const keys = spaceKeys(spaceId);
  const marker = keepsMarkers(storage) ? markerWatch(storage, spaceChanges(spaceId), clock, fullCheckMs) : undefined;
  const folders: Record<Part, string> = { root: keys.root, live: keys.live, history: keys.history, bank: keys.bank };
  const versions = new Map<Part, string>();
  let exists: boolean | undefined;
  let live: Set<string> | undefined;
  let history: Set<string> | undefined;
  /** Entries listed whose record was not yet written: looked at again at each check. */
  const incomplete = new Set<string>();
  let bank: Map<string, string> | undefined;
  /** The bank is compared at the next check (a commit was pending, or the bank's folder changed). */
  let bankDirty = true;

  const windowStart = () => toStamp(new Date(clock().getTime() - WINDOW_MS));

  /** Which parts changed since the last check: by their folder versions, or (without versions) all of them once the marker moved. */
  const changedParts = async (full: boolean): Promise<{ changed: Set<Part>; seen: Map<Part, string | null>; commit?: () => void }> => {
    const seen = new Map<Part, string | null>();
    if (marker) {
      const { changed, commit } = await marker.changed(full);
      return { changed: new Set(changed ? PARTS : []), seen, commit };
    }
    if (!storage.version) return { changed: new Set(PARTS), seen };
    const found = await Promise.all(PARTS.map((part) => (storage.version as (prefix: string) => Promise<string | null>)(folders[part])));
    const changed = new Set<Part>();
    PARTS.forEach((part, i) => {
      const version = found[i] ?? null;
      seen.set(part, version);
      if (version === null || versions.get(part) !== version) changed.add(part);
    });
    return { changed, seen };
  };

  const reset = () => {
    versions.clear();
    live = history = bank = undefined;
    incomplete.clear();
    bankDirty = true;
  };

  const inspect = async (changed: Set<Part>, seen: Map<Part, string | null>): Promise<FeedEvent[]> => {
    if (changed.size === 0 && incomplete.size === 0 && !bankDirty) return [];
    const events: FeedEvent[] = [];
    const baseline = exists === undefined;

    // Existence: on fs when the space's folder changed; without versions at the baseline, while absent, and when notes left (below).
    if (storage.version ? changed.has('root') : baseline || exists === false) {
      const now = (await storage.stat(keys.meta)) !== null;
      if (exists === true && !now) {
        events.push({ type: 'space_deleted', space_id: spaceId });
        reset();
      } else if (exists === false && now) events.push({ type: 'space_created', space_id: spaceId });
      exists = now;
    }
    if (exists === false) {
      // Nothing to list in a space that is not there: looked at again when its folder changes (or, without versions, at each check).
      for (const [part, version] of seen) if (version !== null) versions.set(part, version);
      return events;
    }

    if (changed.has('live')) {
      const names = await listLive(storage, keys, windowStart());
      if (live) {
        const from = windowStart();
        const added = [...names].filter((name) => !live?.has(name));
        const removed = [...live].filter((name) => !names.has(name) && name >= from);
        if (added.length > 0 || removed.length > 0) events.push({ type: 'notes', space_id: spaceId, added, removed });
        // Without versions, notes leaving with no commit may be the space going away.
        if (!storage.version && removed.length > 0 && !(await storage.stat(keys.meta))) {
          exists = false;
          reset();
          return [{ type: 'space_deleted', space_id: spaceId }];
        }
      }
      live = names;
    }

    if (changed.has('history') || incomplete.size > 0) {
      const ids = await listHistory(storage, keys, windowStart(), history, incomplete);
      const added = history ? [...ids].filter((id) => !history?.has(id)) : [];
      if (added.length > 0) {
        events.push({ type: 'committed', space_id: spaceId, ids: added.sort() });
        bankDirty = true;
      }
      history = ids;
    }

    if (storage.version && (changed.has('bank') || changed.has('root'))) bankDirty = true;
    let bankDone = !bankDirty;
    if (bankDirty) {
      // A commit being applied writes the bank file by file: compared once it is done, in one event.
      if (!(await storage.stat(keys.pending))) {
        const now = await readBank(storage, keys);
        const event = bank && bankEvent(spaceId, bank, now);
        // A space being deleted loses its bank before its folder's version says so: told as deleted, not file by file.
        if (event && !(await storage.stat(keys.meta))) {
          exists = false;
          reset();
          events.push({ type: 'space_deleted', space_id: spaceId });
          return events;
        }
        if (event) events.push(event);
        bank = now;
        bankDirty = false;
        bankDone = true;
      }
    }

    for (const [part, version] of seen) {
      if (version === null || (!bankDone && (part === 'bank' || part === 'root'))) continue;
      versions.set(part, version);
    }
    return events;
  };

  return {
    async check(full = false) {
      const { changed, seen, commit } = await changedParts(full);
      const events = await inspect(changed, seen);
      commit?.();
      return events;
    },
  };
}
