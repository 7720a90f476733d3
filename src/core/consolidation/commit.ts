import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { toStamp } from '../note/note-name.js';
import { isIndexFile } from '../recall/index-store.js';
import { updateMeta } from '../space/meta.js';
import type { FileWrite } from './apply-plan.js';
import { applyForget } from './forget-commit.js';
import { encodeHistoryNotes, encodeHistoryPreimages, type HistoryNote } from './history.js';
import { type Disposition, type ProvenanceEntry, recordWithoutSynthesis } from './provenance.js';
import type { RetentionEntry, SectionRetention } from '../retention/record.js';

/**
 * A consolidation commits as one unit. Everything it will write is computed first, then recorded
 * in `_consolidation/pending.json` with a create-only put: that put is the commit point. Before it,
 * nothing has changed. After it, `applyCommit` rolls the record forward — bank files, synthesis,
 * meta, notes moved into history, the record removed — and every step is idempotent, so a run cut
 * short at any instant (kill -9 included) is finished by the next consolidation, with every note
 * consolidated exactly once and no edit applied twice (the record holds final contents, not edits).
 * A stored record is checked before it is applied (pending.ts).
 *
 * A compaction (core/compaction) commits the same way: `kind: 'compaction'`, no notes, no
 * synthesis, and the pre-images of the sections it rewrote, kept in history beside its record. So does
 * a person's correction (core/revision): `kind: 'revision'`, bank files written or deleted whole, the
 * rules perhaps, each file's previous text kept as a pre-image (its heading path empty: the whole file).
 * And so does a person's forget (core/forget): `kind: 'forget'`, no writes, the notes to remove and
 * where each is kept (forget-commit.ts rolls it forward).
 */
export interface CommitRecord {
  id: string;
  space_id: string;
  /** Absent: a consolidation (records written before compactions existed). */
  kind?: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  /** Live note file names covered, oldest first. */
  notes: string[];
  time_range: { oldest: string | null; newest: string | null };
  writes: FileWrite[];
  /** Absent for a compaction, which leaves the synthesis alone. */
  synthesis?: { content: string; expectedEtag: string | null };
  metrics: Record<string, unknown>;
  /** A compaction: each section it rewrote, as it was (heading line included); a revision: each file it changed, whole. */
  preimages?: Preimage[];
  /** A revision: the space's new rules, compare-and-swap like a bank file. */
  rules?: { content: string; expectedEtag: string | null };
  /** A revision: who, why, and what each file was before and is after (what a revert checks and restores). */
  revision?: RevisionInfo;
  /** A consolidation: bank section ← notes, as its plan cited them (provenance.ts); kept in record.json. */
  provenance?: ProvenanceEntry[];
  /** A consolidation: what became of each of its notes (provenance.ts); kept in record.json. */
  dispositions?: Disposition[];
  /** A consolidation: what of each note the bank holds (core/retention), per note; a compaction: what each digest kept of its section. */
  retention?: RetentionEntry[] | SectionRetention[];
  /** A forget: who, why, and each note to remove with where it is kept. */
  forget?: ForgetInfo;
}

export interface ForgetInfo {
  by: string;
  reason: string | null;
  /** Each note: its file name, the consolidation whose notes.json holds it (null: in live/ only). */
  notes: Array<{ filename: string; consolidation_id: string | null }>;
  /** Rewrite the space's backups without them too (backup/purge-forgotten.ts). */
  purge_backups?: boolean;
}

export interface RevisionInfo {
  /** `normalize`: line endings only (doctor --fix, shared/line-endings.ts). */
  action: 'write' | 'delete' | 'rules' | 'revert' | 'normalize';
  by: string;
  reason: string | null;
  /** The revision this one reverts. */
  reverts?: string;
  /** Each bank file changed: whether it existed before, and the version (contentVersion) it has after (null: deleted). */
  files: Array<{ filename: string; existed: boolean; version_after: string | null }>;
  /** When the rules changed: their text before, and the version after. */
  rules?: { before: string; version_after: string };
  /** The person said what it removed was a secret: the earlier texts kept have those lines redacted (revision/targets.ts). */
  secret?: boolean;
  /** A secret taken out of the synthesis: the consolidations whose record's copy of the synthesis held it, and loses it. */
  synthesis_copies?: string[];
}

export interface Preimage {
  filename: string;
  /** Heading path, outermost first. */
  path: string[];
  content: string;
}

/**
 * A new history entry's id: `{YYYYMMDDTHHMMSS}-{ms}{random6}`, the millisecond in two base-36 characters
 * (as note names have it), so entries committed within one second — a person's corrections in a row —
 * still list in the order they were made.
 */
export function historyId(context: CoreContext, now: Date): string {
  return `${toStamp(now)}-${now.getUTCMilliseconds().toString(36).padStart(2, '0')}${context.randomId()}`;
}

/** Test hook: a point where a fault can be injected (the CLI maps LIVE_MEM_TEST_KILL_AT to SIGKILL). */
export type FaultPoint =
  | 'before-commit'
  | 'after-commit'
  | 'after-bank-writes'
  | 'after-meta'
  | 'after-history'
  | 'after-history-rewrite'
  | 'after-live-delete'
  | 'after-derived-delete'
  | 'after-backup-purge';

export async function writeCommit(context: CoreContext, record: CommitRecord): Promise<void> {
  try {
    await context.storage.put(spaceKeys(record.space_id).pending, JSON.stringify(record), { ifNoneMatch: '*', contentType: 'application/json' });
  } catch (error) {
    if (isLiveMemError(error, 'precondition_failed')) {
      throw new LiveMemError('conflict', `space '${record.space_id}' has an unfinished ${record.kind ?? 'consolidation'}; it is completed first`, {
        space_id: record.space_id,
      });
    }
    throw error;
  }
}

/** Writes `content` at `key` unless it is there already; compare-and-swap against `expectedEtag`. */
async function writeOnce(context: CoreContext, key: string, content: string, expectedEtag: string | null, what: string): Promise<void> {
  const { storage } = context;
  const current = await storage.get(key);
  if (current && current.body.toString('utf8') === content) return;
  if ((current?.etag ?? null) !== expectedEtag) {
    throw new LiveMemError('conflict', `${what} changed since the consolidation read it`, { key });
  }
  try {
    await storage.put(key, content, expectedEtag === null ? { ifNoneMatch: '*' } : { ifMatch: expectedEtag });
  } catch (error) {
    if (!isLiveMemError(error, 'precondition_failed')) throw error;
    if ((await storage.get(key))?.body.toString('utf8') !== content) {
      throw new LiveMemError('conflict', `${what} changed while the consolidation wrote it`, { key });
    }
  }
}

/**
 * Deletes `key` unless it is gone already; only the version `expectedEtag` (the store has no conditional
 * delete, but the bank is written only under the space's lease, which the committer holds).
 */
async function deleteOnce(context: CoreContext, key: string, expectedEtag: string | null, what: string): Promise<void> {
  const current = await context.storage.get(key);
  if (!current) return;
  if (current.etag !== expectedEtag) throw new LiveMemError('conflict', `${what} changed since the correction read it`, { key });
  await context.storage.delete(key);
}

/**
 * Rolls a committed consolidation forward. Safe to run any number of times. `bodies` are the notes
 * as the run that committed read them (absent when recovering): they spare reading them again.
 */
export async function applyCommit(context: CoreContext, record: CommitRecord, bodies: ReadonlyMap<string, Buffer> = new Map()): Promise<void> {
  const { storage } = context;
  const fault = (point: FaultPoint) => context.fault(point);
  if (record.kind === 'forget') {
    await applyForget(context, record);
    return;
  }
  const keys = spaceKeys(record.space_id);
  for (const write of record.writes) {
    // A correction may name the synthesis as it names a bank file (no bank file may take that name).
    const [key, what] = write.filename === SYNTHESIS_FILE ? [keys.synthesis, 'the synthesis'] : [keys.bankFile(write.filename), `bank file ${write.filename}`];
    if (write.kind === 'deleted') await deleteOnce(context, key, write.expectedEtag, what);
    else await writeOnce(context, key, write.content, write.expectedEtag, what);
  }
  if (record.synthesis) await writeOnce(context, keys.synthesis, record.synthesis.content, record.synthesis.expectedEtag, 'the synthesis');
  if (record.rules) await writeOnce(context, keys.rules, record.rules.content, record.rules.expectedEtag, 'the rules');
  await fault('after-bank-writes');
  if (record.kind === 'compaction' || record.kind === 'revision') return applyWithoutNotes(context, record);

  await updateMeta(context, record.space_id, (meta) =>
    meta.last_consolidation_id === record.id
      ? meta
      : {
          ...meta,
          last_consolidation: record.committed_at,
          last_consolidation_id: record.id,
          consolidation_count: meta.consolidation_count + 1,
          total_notes_processed: meta.total_notes_processed + record.notes.length,
        },
  );
  await fault('after-meta');

  // History before live/: a note is always in one place or both, never none. The record, written
  // after the notes, says the history is complete; no note leaves live/ before it exists.
  if (!(await storage.stat(keys.historyRecord(record.id)))) {
    const notes = await mapLimit(record.notes, storage.parallelism, async (filename) => ({
      filename,
      body: bodies.get(filename) ?? (await storage.get(keys.note(filename)))?.body,
    }));
    const kept = notes.filter((note): note is HistoryNote => note.body !== undefined);
    await storage.put(keys.historyNotes(record.id), encodeHistoryNotes(kept), { contentType: 'application/json' });
    const { writes, ...summary } = record;
    const historyRecord = { ...summary, bank_files: writes.map((w) => ({ filename: w.filename, kind: w.kind })) };
    await storage.put(keys.historyRecord(record.id), `${JSON.stringify(historyRecord, null, 2)}\n`, { contentType: 'application/json' });
  }
  await fault('after-history');

  await storage.deleteMany(record.notes.map((filename) => keys.note(filename)));
  await fault('after-live-delete');
  await storage.delete(keys.pending);
}

/** The rest of a compaction or a revision: its pre-images, then its record (last: it says the entry is complete). No note moves, no counters. */
async function applyWithoutNotes(context: CoreContext, record: CommitRecord): Promise<void> {
  const { storage } = context;
  const keys = spaceKeys(record.space_id);
  if (!(await storage.stat(keys.historyRecord(record.id)))) {
    // A correction that took a secret out: the index snapshots hold the words of the bank (every process writes new ones).
    if (record.revision?.secret) await storage.deleteMany((await listKeys(storage, keys.index)).filter(isIndexFile));
    // A secret taken out of the synthesis: the records' copies holding it go first (idempotent: a copy gone stays gone).
    for (const cid of record.revision?.synthesis_copies ?? []) {
      const stored = await storage.get(keys.historyRecord(cid));
      let raw: Record<string, unknown> | null = null;
      try {
        raw = stored ? (JSON.parse(stored.body.toString('utf8')) as Record<string, unknown>) : null;
      } catch {
        // damaged: doctor reports it
      }
      const next = raw ? recordWithoutSynthesis(raw, { revision_id: record.id, at: record.committed_at }) : null;
      if (next) await storage.put(keys.historyRecord(cid), `${JSON.stringify(next, null, 2)}\n`, { contentType: 'application/json' });
    }
    const sections = record.preimages ?? [];
    await storage.put(keys.historyPreimages(record.id), encodeHistoryPreimages(sections), { contentType: 'application/json' });
    const historyRecord = {
      id: record.id,
      space_id: record.space_id,
      kind: record.kind,
      committed_at: record.committed_at,
      notes: [],
      time_range: { oldest: null, newest: null },
      bank_files: record.writes.map((w) => ({ filename: w.filename, kind: w.kind })),
      metrics: record.metrics,
      preimages: sections.length,
      ...(record.revision ? { revision: record.revision } : {}),
      ...(record.retention ? { retention: record.retention } : {}),
    };
    await storage.put(keys.historyRecord(record.id), `${JSON.stringify(historyRecord, null, 2)}\n`, { contentType: 'application/json' });
  }
  await context.fault('after-history');
  await storage.delete(keys.pending);
}
