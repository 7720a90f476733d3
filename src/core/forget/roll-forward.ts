import { listKeys, listPrefixes } from '../../storage/list.js';
import { type PurgedBackup, purgeForgotten } from './purge-backups.js';
import { scrubJobs } from './scrub-jobs.js';
import { recordWithout, recordWithoutSynthesis, isForgetId } from '../commit/history-record.js';
import type { CoreContext } from '../context.js';
import { spaceKeys, isIndexFile } from '../layout.js';
import { loadSummaries } from '../derived/summary-store.js';
import { coveringSummaries } from '../derived/summary-record.js';
import type { CommitRecord } from '../commit/record.js';
import { decodeHistoryNotes, encodeHistoryNotes } from '../commit/history.js';

/** What rolling a forget forward removed, for its receipt (a recovery drops it: the next forget's receipt is its own). */
export interface ForgetApplied {
  /** Note files deleted from live/ (those that were there). */
  live: string[];
  /** Each consolidation whose notes.json was rewritten without them, and which of its notes went. */
  history: Array<{ consolidation_id: string; notes: string[] }>;
  /** Summaries deleted: those covering a forgotten note, and every summary above them. */
  summaries: Array<{ level: number; id: string }>;
  /** Search index snapshots deleted (they hold the index's postings and vectors). */
  snapshots: string[];
  /** With purge_backups: each backup rewritten without the notes. */
  backups: PurgedBackup[];
  /** Consolidations whose record.json lost its copy of the synthesis (it may carry the notes' text forward). */
  synthesis_copies: string[];
  /** Background job records (consolidations, summaries) whose text was taken out. */
  jobs: string[];
  /** Pending records once refused and set aside (quarantine) that named the notes, deleted. */
  quarantined: string[];
  /** Temp files writers killed mid-write left in the space (fs), deleted. */
  temp_files: string[];
}

/**
 * Rolls a committed forget forward; every step is idempotent, so a run cut short at any point is
 * finished by the next holder of the space's lease. First the derived data that may hold the text:
 * summaries covering the notes (the next summaries run writes them again without them) and index
 * snapshots (rebuilt by the next process that loads none). Then the forget's own history entry: the
 * tombstone every process learns the forget from (note/corpus.ts `sync`); from then on no reader
 * of this or another process returns the notes, even before the files are rewritten. Then the
 * history files and live/; the backups when asked (purge-backups.ts); the records beside them
 * that may hold their text (sideRecords); then the derived data once more, found when this runs (not
 * when committed), so a summary or snapshot written in between goes too.
 */
export async function applyForget(context: CoreContext, record: CommitRecord): Promise<ForgetApplied> {
  const { storage } = context;
  const keys = spaceKeys(record.space_id);
  const info = record.forget;
  if (!info) throw new Error(`forget ${record.id} has no forget info`); // pending.ts refuses such a record before it gets here
  const filenames = info.notes.map((note) => note.filename);
  const byConsolidation = new Map<string, string[]>();
  for (const note of info.notes) {
    if (note.consolidation_id) byConsolidation.set(note.consolidation_id, [...(byConsolidation.get(note.consolidation_id) ?? []), note.filename]);
  }

  // Derived data first, so no summary outlives a cut: readers drop the notes themselves from the next step on.
  const first = await removeDerived(context, record.space_id, new Set(filenames));
  await context.fault('after-derived-delete');

  if (!(await storage.stat(keys.historyRecord(record.id)))) {
    const entry = {
      id: record.id,
      space_id: record.space_id,
      kind: 'forget',
      committed_at: record.committed_at,
      notes: [],
      time_range: { oldest: null, newest: null },
      bank_files: [],
      metrics: record.metrics,
      // Names and places, never the text: the names are what every process drops.
      forget: { by: info.by, reason: info.reason, notes_count: filenames.length, filenames, consolidations: [...byConsolidation.keys()] },
    };
    await storage.put(keys.historyRecord(record.id), `${JSON.stringify(entry, null, 2)}\n`, { contentType: 'application/json' });
  }
  await context.fault('after-history');

  const history: ForgetApplied['history'] = [];
  for (const [cid, names] of byConsolidation) {
    const gone = new Set(names);
    const notesKey = keys.historyNotes(cid);
    const stored = await storage.get(notesKey);
    if (stored) {
      const notes = decodeHistoryNotes(stored.body, notesKey);
      const kept = notes.filter((note) => !gone.has(note.filename));
      if (kept.length < notes.length) await storage.put(notesKey, encodeHistoryNotes(kept), { contentType: 'application/json' });
    }
    await noteRemoval(context, record, cid, names);
    history.push({ consolidation_id: cid, notes: names });
  }
  await context.fault('after-history-rewrite');

  const liveKeys = filenames.map((filename) => keys.note(filename));
  const there = await Promise.all(liveKeys.map(async (key) => ((await storage.stat(key)) ? key : null)));
  await storage.deleteMany(liveKeys);
  await context.fault('after-live-delete');

  const backups = info.purge_backups ? await purgeForgotten(context, record.space_id, info.notes, { forget_id: record.id, at: record.committed_at }) : [];
  if (info.purge_backups) await context.fault('after-backup-purge');

  const sides = await sideRecords(context, record.space_id, new Set(filenames), [...byConsolidation.keys()], { forget_id: record.id, at: record.committed_at });
  // Again: a summaries run or an index snapshot that wrote before it could see the forget's entry (they check it after writing too).
  const second = await removeDerived(context, record.space_id, new Set(filenames));
  await storage.delete(keys.pending);
  const summaries = new Map([...first.summaries, ...second.summaries].map((summary) => [`${summary.level}/${summary.id}`, summary]));
  return {
    live: filenames.filter((_, i) => there[i] !== null),
    history,
    summaries: [...summaries.values()],
    snapshots: [...new Set([...first.snapshots, ...second.snapshots])],
    backups,
    ...sides,
  };
}

/**
 * The records beside the notes that may hold their text: the synthesis copy each consolidation
 * record keeps, from the first that took a note on (the synthesis is cumulative: each carries the
 * last forward); the job records of consolidations and summaries (a refused plan's warning quotes
 * the line it refused); pending records set aside that name a note (they hold the bank and synthesis
 * a consolidation was to write); and temp files writers killed mid-write left (fs: a notes.json cut
 * before its rename holds every note of it). Spend records hold counts only, and are left. With
 * `removal` (the forget rolling forward) each is cleaned or deleted; without (a dry run), listed.
 */
export async function sideRecords(
  context: CoreContext,
  spaceId: string,
  gone: ReadonlySet<string>,
  consolidations: readonly string[],
  removal?: { forget_id: string; at: string },
) {
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const synthesis_copies: string[] = [];
  for (const cid of await synthesisCopiesAfter(context, spaceId, consolidations)) {
    const stored = await storage.get(keys.historyRecord(cid));
    const raw = stored ? parseRaw(stored.body) : null;
    const next = raw ? recordWithoutSynthesis(raw, removal ?? { forget_id: '', at: '' }) : null;
    if (!next) continue; // none (a compaction, a revision, one cleaned already), or damaged: doctor reports it
    if (removal) await storage.put(keys.historyRecord(cid), `${JSON.stringify(next, null, 2)}\n`, { contentType: 'application/json' });
    synthesis_copies.push(cid);
  }
  const apply = removal !== undefined;
  const jobs = [...(await scrubJobs(context, keys.jobs, gone, apply)), ...(await scrubJobs(context, keys.summaryJobs, gone, apply))];
  const quarantined: string[] = [];
  for (const key of await listKeys(storage, keys.quarantine)) {
    const body = (await storage.get(key))?.body;
    if (body && [...gone].some((name) => body.includes(name))) quarantined.push(key);
  }
  if (apply) await storage.deleteMany(quarantined);
  // Those of running writes are left: each is renamed or removed within milliseconds, and none is the forget's business.
  const debris = (await storage.debris?.(keys.root, { remove: apply })) ?? [];
  const temp_files = debris.filter((file) => (apply ? file.removed : file.stale)).map((file) => file.path);
  return { synthesis_copies, jobs, quarantined, temp_files };
}

/** The consolidations whose record.json may hold the notes in its synthesis copy: the first holding one, and every one after it. */
async function synthesisCopiesAfter(context: CoreContext, spaceId: string, consolidations: readonly string[]): Promise<string[]> {
  if (consolidations.length === 0) return [];
  const first = [...consolidations].sort()[0] as string;
  const root = spaceKeys(spaceId).history;
  return (await listPrefixes(context.storage, root))
    .map((prefix) => prefix.slice(root.length, -1))
    .filter((cid) => cid >= first && !isForgetId(cid))
    .sort();
}

const parseRaw = (body: Buffer): Record<string, unknown> | null => {
  try {
    const raw = JSON.parse(body.toString('utf8')) as unknown;
    return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** Deletes the summaries covering the notes (and those above) and every index snapshot of the space, with its live notes' texts. */
async function removeDerived(context: CoreContext, spaceId: string, filenames: ReadonlySet<string>) {
  const keys = spaceKeys(spaceId);
  const summaries = await summariesCovering(context, spaceId, filenames);
  await context.storage.deleteMany(summaries.map(({ level, id }) => keys.summary(level, id)));
  const snapshots = (await listKeys(context.storage, keys.index)).filter(isIndexFile);
  await context.storage.deleteMany(snapshots);
  return { summaries, snapshots };
}

/** The consolidation's record.json: its `notes` without them, and a note of the removal (which, when, by whom, why). Once per forget. */
async function noteRemoval(context: CoreContext, record: CommitRecord, cid: string, names: string[]): Promise<void> {
  const key = spaceKeys(record.space_id).historyRecord(cid);
  const stored = await context.storage.get(key);
  if (!stored) return;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(stored.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return; // damaged: doctor reports it; readers drop the notes by the forget's own entry
  }
  const forgotten = Array.isArray(raw.forgotten) ? (raw.forgotten as Array<{ forget_id?: unknown }>) : [];
  if (forgotten.some((entry) => entry?.forget_id === record.id)) return;
  const gone = new Set(names);
  const next = {
    ...recordWithout(raw, gone),
    forgotten: [
      ...forgotten,
      { forget_id: record.id, filenames: names, at: record.committed_at, by: record.forget?.by, reason: record.forget?.reason ?? null },
    ],
  };
  await context.storage.put(key, `${JSON.stringify(next, null, 2)}\n`, { contentType: 'application/json' });
}

/** Every stored summary whose text may hold one of `filenames` (see coveringSummaries); one that does not parse counts. */
export async function summariesCovering(context: CoreContext, spaceId: string, filenames: ReadonlySet<string>): Promise<Array<{ level: number; id: string }>> {
  const levels = await loadSummaries(context, spaceId);
  const all = [...levels].flatMap(([level, stored]) => [
    ...[...stored.records].map(([id, { record }]) => ({ level, id, covers: record.covers })),
    ...[...stored.corrupt.keys()].map((id) => ({ level, id, covers: null })),
  ]);
  return coveringSummaries(all, filenames);
}
