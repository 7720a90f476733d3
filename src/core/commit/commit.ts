import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys, isIndexFile } from '../layout.js';
import { updateMeta } from '../space-meta.js';
import { applyForget } from './forget.js';
import { encodeHistoryNotes, encodeHistoryPreimages, type HistoryNote } from './history.js';
import { recordWithoutSynthesis } from './history-record.js';
import type { CommitRecord, FaultPoint } from './record.js';

/**
 * The commit point: the record (record.ts) written create-only at `_consolidation/pending.json`; from
 * here on, applyCommit finishes it, in this run or the next holder of the space's lease (space-lock.ts).
 */
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
 * Rolls a committed record forward, by its kind: a consolidation (applyConsolidation), a compaction or
 * a revision (applyWithoutNotes), a forget (forget.ts). Safe to run any number of times. `bodies` are
 * the notes as the run that committed read them (absent when recovering): they spare reading them again.
 */
export async function applyCommit(context: CoreContext, record: CommitRecord, bodies: ReadonlyMap<string, Buffer> = new Map()): Promise<void> {
  if (record.kind === 'forget') {
    await applyForget(context, record);
    return;
  }
  const fault = (point: FaultPoint) => context.fault(point);
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
  return applyConsolidation(context, record, bodies);
}

/** The rest of a consolidation: the meta's counters, its notes moved into history with its record, then out of live/. */
async function applyConsolidation(context: CoreContext, record: CommitRecord, bodies: ReadonlyMap<string, Buffer>): Promise<void> {
  const { storage } = context;
  const fault = (point: FaultPoint) => context.fault(point);
  const keys = spaceKeys(record.space_id);

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
