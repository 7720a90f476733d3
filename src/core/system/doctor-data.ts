import { isUtf8 } from 'node:buffer';
import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError } from '../../shared/errors.js';
import { inspectLease } from '../../storage/lease.js';
import { listAll, listKeys, listPrefixes } from '../../storage/list.js';
import { parseTokenFile, TOKENS_KEY } from '../auth/token-store.js';
import { decodeHistoryNotes, decodeHistoryPreimages } from '../commit/history.js';
import { lockSpace } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { BACKUPS_PREFIX, backupKeys, baseName, spaceKeys } from '../layout.js';
import { parseNoteFile } from '../note/note-file.js';
import { parseNoteName } from '../note-name.js';
import { keepsPreimages, parseHistoryRecord } from '../commit/history-record.js';
import { isUnreadableMeta, junkCounters, readRawMeta, updateMeta, type SpaceMeta } from '../space-meta.js';
import { historyState, plural, type SpaceCheckDeps } from './doctor-space.js';
import type { Finding } from './doctor-space.js';

/**
 * The doctor's checks of what a space's files hold (see doctor.ts): the meta, the folders, history
 * records and notes, live notes, and backups a killed run left. Reading note bodies is the costly
 * part, so each space's bodies are read up to a budget (`DeepBudget`); what is past it is said, not read.
 */

/** Bytes of note bodies (live notes, history notes.json) one doctor run reads per space. */
export const DEEP_READ_BYTES = 64 * 1024 * 1024;
export interface DeepBudget {
  left: number;
  /** Files not read because the budget ran out. */
  skipped: number;
}
export const deepBudget = (): DeepBudget => ({ left: DEEP_READ_BYTES, skipped: 0 });

/** A backup folder without its manifest this old was left by a killed run (a running one writes its files in minutes). */
const ORPHAN_BACKUP_MS = 3_600_000;

const failure = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const restoreHint = (spaceId: string, what: string) =>
  `restore ${what} from a backup (\`live-mem backup list ${spaceId}\`, then \`live-mem backup download\` and take the file from the archive) or repair it by hand`;

/** `_system/tokens.json`: unreadable, every token is refused (HTTP 500 for every request with one). */
export async function checkTokens(context: CoreContext): Promise<Finding> {
  const object = await context.storage.get(TOKENS_KEY);
  if (!object) return { check: 'tokens', status: 'ok', fixable: false, message: 'no token created yet' };
  try {
    parseTokenFile(object.body);
    // No count: any reader may run doctor, and how many tokens exist is the admins' business.
    return { check: 'tokens', status: 'ok', fixable: false, message: `${TOKENS_KEY} reads` };
  } catch (error) {
    return {
      check: 'tokens',
      status: 'error',
      fixable: false,
      message: `${TOKENS_KEY} is unreadable (${failure((error as Error).cause ?? error)}): every request with a token fails until it is repaired`,
      hint: `restore it from a copy, or move it aside and create the tokens again (\`live-mem token create\`: without the file, only the local owner, or LIVE_MEM_ADMIN_TOKEN where auth is required, gets in)`,
    };
  }
}

/** `_meta.json` not JSON (the space is listed as broken), or counters that are no counts (read as 0). */
export async function checkMeta(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context, caller, fix } = deps;
  const keys = spaceKeys(spaceId);
  let raw: Partial<SpaceMeta>;
  try {
    ({ raw } = await readRawMeta(context, spaceId));
  } catch (error) {
    if (isLiveMemError(error, 'not_found')) return [];
    if (!isUnreadableMeta(error)) throw error;
    return [
      {
        check: 'meta',
        space_id: spaceId,
        status: 'error',
        fixable: false,
        message: `${keys.meta} is unreadable (not JSON): '${spaceId}' is listed as broken, and \`space info\` and consolidations of it fail`,
        hint: `${restoreHint(spaceId, keys.meta)}: a JSON object such as {"space_id": "${spaceId}", "description": "", "owner": "", "created_at": "2026-01-01T00:00:00Z", "last_consolidation": null, "consolidation_count": 0, "total_notes_processed": 0}`,
      },
    ];
  }
  const junk = junkCounters(raw) as Array<'consolidation_count' | 'total_notes_processed'>;
  if (junk.length === 0) return [];
  const finding: Finding = {
    check: 'meta',
    space_id: spaceId,
    status: 'warn',
    fixable: true,
    fix: 'counts them again from history, under the space lease',
    message: `${keys.meta} holds ${junk.map((field) => `${field}: ${JSON.stringify(raw[field])}`).join(', ')}, which ${junk.length === 1 ? 'is no count: it reads' : 'are no counts: they read'} as 0`,
    hint: `\`live-mem doctor ${spaceId} --fix\``,
  };
  if (!fix) return [finding];
  try {
    const held = await lockSpace(context, spaceId, caller, 'doctor');
    let counts: Record<'consolidation_count' | 'total_notes_processed', number>;
    try {
      counts = await countHistory(context, spaceId);
      const recounted = Object.fromEntries(junk.map((field) => [field, counts[field]]));
      await updateMeta(context, spaceId, (meta) => ({ ...meta, ...recounted }));
    } finally {
      await held.release();
    }
    const said = junk.map((field) => `${field} ${counts[field]}`).join(', ');
    return [{ ...finding, status: 'ok', fixed: true, message: `counted the meta of '${spaceId}' again from history: ${said}` }];
  } catch (error) {
    return [{ ...finding, message: `${finding.message}; could not count them again: ${failure(error)}` }];
  }
}

/**
 * Complete consolidations and the notes they took (a damaged record counts for none: see the
 * history-files check); compactions are no consolidations and leave these counters alone.
 */
async function countHistory(context: CoreContext, spaceId: string) {
  const keys = spaceKeys(spaceId);
  const { complete } = await historyState(context, spaceId);
  const notes = await mapLimit([...complete], context.storage.parallelism, async (cid) => {
    const object = await context.storage.get(keys.historyRecord(cid));
    if (!object) return 0;
    try {
      const record = parseHistoryRecord(object.body, spaceId, cid);
      // A note a forget removed since was processed all the same: the counters keep it.
      return record.kind === 'consolidation' ? record.notes.length + (record.forgotten ?? []).reduce((sum, entry) => sum + entry.filenames.length, 0) : null;
    } catch {
      return 0;
    }
  });
  const consolidations = notes.filter((count) => count !== null);
  return { consolidation_count: consolidations.length, total_notes_processed: consolidations.reduce((sum, count) => sum + count, 0) };
}

/** `live/`, `bank/` or `history/` replaced by a file (fs; on S3, an object of that name, as harmful to tools that mirror the bucket). */
export async function checkLayout(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { storage } = deps.context;
  const keys = spaceKeys(spaceId);
  const files = await Promise.all([keys.live, keys.bank, keys.history].map(async (folder) => ((await storage.stat(folder.slice(0, -1))) ? folder : null)));
  return files
    .filter((folder) => folder !== null)
    .map((folder) => ({
      check: 'layout',
      space_id: spaceId,
      status: 'error' as const,
      fixable: false,
      message: `${folder.slice(0, -1)} is a file, not a folder: what '${spaceId}' keeps there cannot be written or read`,
      hint: `move the file aside by hand (it is not live-mem's), then \`mkdir ${folder}\` or restore '${spaceId}' from a backup`,
    }));
}

/** Each complete consolidation's record.json and notes.json decode (the notes within the budget), and each compaction's preimages.json. */
export async function checkHistoryFiles(deps: SpaceCheckDeps, spaceId: string, complete: ReadonlySet<string>, budget: DeepBudget): Promise<Finding[]> {
  const { storage } = deps.context;
  const keys = spaceKeys(spaceId);
  const sizes = new Map<string, number | undefined>(); // a listing may not say sizes (fs): then one stat does
  for await (const object of listAll(storage, keys.history)) if (object.key.endsWith('/notes.json')) sizes.set(object.key, object.size);
  const newestFirst = [...complete].sort().reverse();
  const problems = await mapLimit(newestFirst, storage.parallelism, async (cid): Promise<Finding | null> => {
    const where = { check: 'history-files', space_id: spaceId, status: 'error' as const, fixable: false };
    const object = await storage.get(keys.historyRecord(cid));
    if (!object) return null; // deleted since listed
    let notes: number;
    try {
      const record = parseHistoryRecord(object.body, spaceId, cid);
      if (keepsPreimages(record)) return checkPreimages(deps, spaceId, cid, budget);
      notes = record.notes.length;
    } catch {
      return {
        ...where,
        message: `${keys.historyRecord(cid)} is not valid JSON: \`history list\` leaves consolidation ${cid} out, and recall its notes`,
        hint: restoreHint(spaceId, keys.historyRecord(cid)),
      };
    }
    const notesKey = keys.historyNotes(cid);
    if (!sizes.has(notesKey)) {
      if (notes === 0) return null;
      return {
        ...where,
        message: `${notesKey} is missing: the ${plural(notes, 'note')} consolidation ${cid} moved out of live/ are kept nowhere else`,
        hint: restoreHint(spaceId, notesKey),
      };
    }
    const size = sizes.get(notesKey) ?? (await storage.stat(notesKey))?.size;
    if (size === undefined || !spend(budget, size)) return null;
    const body = await storage.get(notesKey);
    try {
      if (body) decodeHistoryNotes(body.body, notesKey);
      return null;
    } catch (error) {
      return {
        ...where,
        message: `${failure(error)}: recall leaves out the ${plural(notes, 'note')} of consolidation ${cid}`,
        hint: restoreHint(spaceId, notesKey),
      };
    }
  });
  return problems.filter((finding) => finding !== null);
}

/** A compaction's preimages.json is there and decodes: else recall cannot find what it rewrote, nor history_read show it. */
async function checkPreimages(deps: SpaceCheckDeps, spaceId: string, cid: string, budget: DeepBudget): Promise<Finding | null> {
  const { storage } = deps.context;
  const key = spaceKeys(spaceId).historyPreimages(cid);
  try {
    const info = await storage.stat(key);
    if (info && !spend(budget, info.size ?? 0)) return null;
    const object = info ? await storage.get(key) : null;
    if (!object) throw new Error(`${key} is missing`);
    decodeHistoryPreimages(object.body, key);
    return null;
  } catch (error) {
    return {
      check: 'history-files',
      space_id: spaceId,
      status: 'error',
      fixable: false,
      message: `${failure(error)}: the text compaction ${cid} rewrote is kept nowhere else, and recall leaves it out`,
      hint: restoreHint(spaceId, key),
    };
  }
}

/**
 * Live notes are UTF-8 text with their front-matter (within the budget): a note cut short or binary
 * is recalled garbled and handed to the model as it is. Files not named like notes are not notes.
 */
export async function checkLiveNotes(deps: SpaceCheckDeps, spaceId: string, budget: DeepBudget): Promise<Finding[]> {
  const { context } = deps;
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  // A note's front-matter is short, and its content at most maxNoteChars of up to 4 bytes each.
  const largest = context.limits.maxNoteChars * 4 + 64 * 1024;
  const notes: Array<{ key: string; size: number | undefined }> = [];
  for await (const object of listAll(storage, keys.live)) if (parseNoteName(baseName(object.key))) notes.push({ key: object.key, size: object.size });
  const bad = await mapLimit(notes, storage.parallelism, async ({ key, size }): Promise<string | null> => {
    const known = size ?? (await storage.stat(key))?.size; // one stat where the listing says no size (fs)
    if (known === undefined) return null; // consolidated since listed
    if (known === 0) return `${baseName(key)} is empty`;
    if (known > largest) return `${baseName(key)} has ${known} bytes, more than any note live-mem writes`;
    if (!spend(budget, known)) return null;
    const object = await storage.get(key);
    if (!object) return null;
    if (!isUtf8(object.body)) return `${baseName(key)} is not UTF-8 text (binary, or cut inside a character)`;
    if (parseNoteFile(object.body.toString('utf8')).timestamp === undefined) return `${baseName(key)} has no front-matter (cut short, or not a note file)`;
    return null;
  });
  const found = bad.filter((problem) => problem !== null);
  if (found.length === 0) return [];
  return [
    {
      check: 'notes',
      space_id: spaceId,
      status: 'warn',
      fixable: false,
      message: `${plural(found.length, 'live note')} of '${spaceId}' ${found.length === 1 ? 'is' : 'are'} not a readable note: ${found.slice(0, 3).join('; ')}${found.length > 3 ? '; …' : ''}`,
      hint: `recall shows them garbled and the next consolidation hands them to the model as they are: look at them in ${keys.live}, delete the junk by hand or restore them from a backup`,
    },
  ];
}

/** Whether a file of `size` bytes is read: while the budget lasts. */
function spend(budget: DeepBudget, size: number): boolean {
  if (size > budget.left) {
    budget.skipped++;
    return false;
  }
  budget.left -= size;
  return true;
}

/** What the budget left unread in a space, said once. */
export function budgetFinding(spaceId: string, budget: DeepBudget): Finding[] {
  if (budget.skipped === 0) return [];
  return [
    {
      check: 'notes',
      space_id: spaceId,
      status: 'ok',
      fixable: false,
      message: `'${spaceId}': ${plural(budget.skipped, 'note file')} not read (doctor reads ${DEEP_READ_BYTES / 1024 / 1024} MB of note bodies per space; their names and sizes were checked)`,
    },
  ];
}

/**
 * `_backups/{space}/{stamp}/` without its manifest (written last): a backup whose run was killed.
 * An old one is debris (`fix` deletes it); a young one, or one whose space a backup holds the lease
 * of, may still be running and is left alone.
 */
export async function checkBackups(deps: Omit<SpaceCheckDeps, 'snapshots' | 'rebuildIndex'>, spaceIds: string[] | undefined): Promise<Finding[]> {
  const { context, fix } = deps;
  const { storage } = context;
  const spaces = spaceIds ?? (await listPrefixes(storage, BACKUPS_PREFIX)).map((prefix) => prefix.slice(BACKUPS_PREFIX.length, -1));
  const findings: Finding[] = [];
  for (const spaceId of spaces) {
    const stamps = (await listPrefixes(storage, `${BACKUPS_PREFIX}${spaceId}/`)).map((prefix) => prefix.slice(BACKUPS_PREFIX.length + spaceId.length + 1, -1));
    const unfinished = (
      await mapLimit(stamps, storage.parallelism, async (stamp) => ((await storage.stat(backupKeys(spaceId, stamp).manifest)) ? null : stamp))
    ).filter((stamp) => stamp !== null);
    if (unfinished.length === 0) continue;
    const lease = await inspectLease(storage, spaceKeys(spaceId).lock, context.clock, context.consolidation.leaseTtlMs);
    const running = lease.state === 'held' && lease.record?.owner.startsWith('backup:') === true;
    for (const stamp of unfinished) {
      const { root } = backupKeys(spaceId, stamp);
      const files = [];
      for await (const object of listAll(storage, root)) files.push(object);
      // A listing may not say times (fs): then a stat does. A file gone meanwhile counts as just written.
      const times = await mapLimit(files, storage.parallelism, async (file) => (file.lastModified ?? (await storage.stat(file.key))?.lastModified)?.getTime());
      const newest = times.reduce<number>((max, time) => Math.max(max, time ?? Number.POSITIVE_INFINITY), 0);
      const where = { check: 'backups', space_id: spaceId };
      if (running || context.clock().getTime() - newest < ORPHAN_BACKUP_MS) {
        findings.push({ ...where, status: 'ok', fixable: false, message: `backup ${spaceId}/${stamp} is being written (no manifest yet): left alone` });
        continue;
      }
      const finding: Finding = {
        ...where,
        status: 'warn',
        fixable: true,
        fix: 'deletes them',
        message: `${root} holds ${plural(files.length, 'file')} of a backup that never finished (no manifest.json): its run was killed`,
        hint: 'harmless (it is not listed as a backup), but it takes room: `live-mem doctor --fix` deletes it',
      };
      if (!fix) {
        findings.push(finding);
        continue;
      }
      try {
        await storage.deleteMany(files.map((file) => file.key));
        const left = await listKeys(storage, root);
        if (left.length > 0) throw new Error(`${plural(left.length, 'file')} could not be deleted`);
        findings.push({ ...finding, status: 'ok', fixed: true, message: `deleted ${plural(files.length, 'file')} of the unfinished backup ${root}` });
      } catch (error) {
        findings.push({ ...finding, message: `${finding.message}; could not delete them: ${failure(error)}` });
      }
    }
  }
  return findings;
}
