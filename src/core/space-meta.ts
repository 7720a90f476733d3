import { isLiveMemError, LiveMemError } from '../shared/errors.js';
import { isoSeconds } from '../shared/time.js';
import type { CoreContext } from './context.js';
import { spaceKeys } from './layout.js';
import { listPrefixes } from '../storage/list.js';
import type { StoredObject } from '../storage/types.js';
import { SPACE_ID_PATTERN, validateSpaceId } from './validate.js';

/** `{space}/_meta.json`. Fields unknown to this version are kept as they are on every rewrite. */
export interface SpaceMeta {
  space_id: string;
  description: string;
  owner: string;
  created_at: string;
  updated_at?: string;
  last_consolidation: string | null;
  consolidation_count: number;
  total_notes_processed: number;
  /**
   * The project the space belongs to (`github.com/acme/webapp`): set when a project's first note or
   * `live-mem space bind` made it its space; a space that records another is never a project's older
   * space (space/project-space.ts).
   */
  project?: string;
  [field: string]: unknown;
}

export interface LoadedMeta {
  meta: SpaceMeta;
  etag: string;
}

/** Reads a space's meta; `not_found` when the space does not exist, `storage_error` (data `unreadable`) when it is not JSON. */
export async function loadMeta(context: CoreContext, spaceId: string): Promise<LoadedMeta> {
  const { raw, object } = await readRawMeta(context, spaceId);
  const meta: SpaceMeta = {
    ...raw,
    space_id: spaceId,
    description: String(raw.description ?? ''),
    owner: String(raw.owner ?? ''),
    created_at: String(raw.created_at ?? isoSeconds(object.lastModified)),
    last_consolidation: typeof raw.last_consolidation === 'string' ? raw.last_consolidation : null,
    consolidation_count: counter(raw.consolidation_count) ?? 0,
    total_notes_processed: counter(raw.total_notes_processed) ?? 0,
  };
  return { meta, etag: object.etag };
}

/** The meta's fields as stored, before `loadMeta` fills in and resets what is missing or junk. */
export async function readRawMeta(context: CoreContext, spaceId: string): Promise<{ raw: Partial<SpaceMeta>; object: StoredObject }> {
  validateSpaceId(spaceId);
  const object = await context.storage.get(spaceKeys(spaceId).meta);
  if (!object) throw new LiveMemError('not_found', `space '${spaceId}' does not exist`, { space_id: spaceId });
  let parsed: unknown;
  try {
    parsed = JSON.parse(object.body.toString('utf8'));
  } catch (cause) {
    throw new LiveMemError(
      'storage_error',
      `space '${spaceId}' has an unreadable _meta.json`,
      { space_id: spaceId, unreadable: spaceKeys(spaceId).meta },
      { cause },
    );
  }
  return { raw: (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {}) as Partial<SpaceMeta>, object };
}

/** Whether `error` is `loadMeta` saying the meta is not JSON (as against the store failing). */
export const isUnreadableMeta = (error: unknown): boolean => isLiveMemError(error, 'storage_error') && typeof error.data.unreadable === 'string';

/** The counters of a meta that are present but not a count (`loadMeta` reads them as 0). */
export const COUNTERS = ['consolidation_count', 'total_notes_processed'] as const;
export const junkCounters = (raw: Partial<SpaceMeta>): string[] => COUNTERS.filter((field) => field in raw && counter(raw[field]) === undefined);

/** A count (a non-negative integer, or its decimal string as the Python server may write), else undefined. */
function counter(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

/**
 * Applies `change` to the meta with compare-and-swap, re-reading and retrying when another writer
 * got there first, so concurrent updates never lose each other.
 */
export async function updateMeta(context: CoreContext, spaceId: string, change: (meta: SpaceMeta) => SpaceMeta): Promise<SpaceMeta> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const { meta, etag } = await loadMeta(context, spaceId);
    const next = change(meta);
    try {
      await context.storage.put(spaceKeys(spaceId).meta, serializeMeta(next), { ifMatch: etag });
      return next;
    } catch (error) {
      if (!isLiveMemError(error, 'precondition_failed')) throw error;
    }
  }
  throw new LiveMemError('conflict', `space '${spaceId}' metadata kept changing; try again`, { space_id: spaceId });
}

export const serializeMeta = (meta: SpaceMeta): string => `${JSON.stringify(meta, null, 2)}\n`;

/**
 * Throws `not_found` unless the space exists. One stat, started after this call (a space deleted
 * before it is seen) and shared by the calls made at the same time (fresh-stat.ts).
 */
export async function requireSpace(context: CoreContext, spaceId: string): Promise<void> {
  if (!(await context.freshStat(spaceKeys(spaceId).meta))) {
    throw new LiveMemError('not_found', `space '${spaceId}' does not exist`, { space_id: spaceId });
  }
}

/** Every folder at the root of the store named like a space (a folder without _meta.json is not one). */
/**
 * The spaces' ids, in code-unit order of the ids themselves: the store lists folders with their
 * '/', which sorts after '-', so `my-project-2/` came before `my-project/`.
 */
export async function listSpaceIds(context: CoreContext): Promise<string[]> {
  return (await listPrefixes(context.storage, ''))
    .map((prefix) => prefix.slice(0, -1))
    .filter((id) => SPACE_ID_PATTERN.test(id))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
