import { mapLimit } from '../../shared/concurrency.js';
import { invalid } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { updateMeta } from '../space-meta.js';
import { checkRetention } from '../retention/record.js';
import { applyWrites } from '../commit/commit.js';
import { encodeHistoryNotes, type HistoryNote } from '../commit/history.js';
import type { CommitKind } from '../commit/kind.js';
import { checkBankWrites, isObject, isStringOrNull, refuseField } from '../commit/pending.js';
import { type CommitRecord, DISPOSITION_STATUSES, type DispositionStatus } from '../commit/record.js';

/**
 * A consolidation as a kind of commit (commit/kind.ts): its record writes bank files and the
 * synthesis, and moves its notes into history; it cites notes (provenance.ts) and checks what of them
 * the bank holds (core/retention).
 */
export const consolidationCommit: CommitKind = {
  kind: 'consolidation',
  verify(record, written) {
    checkBankWrites(record.writes);
    const { synthesis } = record;
    if (!isObject(synthesis) || typeof synthesis.content !== 'string' || !isStringOrNull(synthesis.expectedEtag)) throw invalid('its synthesis is malformed');
    refuseField(record, ['preimages'], 'it holds pre-images, which only a compaction has');
    refuseField(record, ['rules', 'revision'], 'it changes the rules, which only a revision does');
    refuseField(record, ['forget'], 'it forgets notes, which only a forget does');
    const notes = new Set(record.notes as string[]);
    checkProvenance(record.provenance, record.dispositions, notes, written);
    checkRetention(record.retention, { kind: 'consolidation', notes, written });
  },
  rollForward: (context, record) => rollForwardConsolidation(context, record),
};

/**
 * Rolls a committed consolidation forward: the bank written, the meta's counters, its notes moved
 * into history with its record, then out of live/. `bodies` are the notes as the run that committed
 * read them (absent when recovering): they spare reading them again.
 */
export async function rollForwardConsolidation(context: CoreContext, record: CommitRecord, bodies: ReadonlyMap<string, Buffer> = new Map()): Promise<void> {
  const { storage } = context;
  const keys = spaceKeys(record.space_id);
  await applyWrites(context, record);

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
  await context.fault('after-meta');

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
  await context.fault('after-history');

  await storage.deleteMany(record.notes.map((filename) => keys.note(filename)));
  await context.fault('after-live-delete');
  await storage.delete(keys.pending);
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Checks a stored record's provenance and dispositions (a record is input); both are
 * optional (records written before they existed). Every note named must be one of the record's, every
 * file one it writes. Throws `invalid_input`.
 */
function checkProvenance(provenance: unknown, dispositions: unknown, notes: ReadonlySet<string>, written: ReadonlySet<string>): void {
  if (provenance !== undefined) {
    if (!Array.isArray(provenance) || provenance.length > 100_000) throw invalid('its provenance is not a list (or an endless one)');
    for (const entry of provenance) {
      if (!isObject(entry) || typeof entry.filename !== 'string' || !isStringList(entry.path) || !isStringList(entry.notes)) {
        throw invalid('one of its provenance entries is malformed (filename, path, notes)');
      }
      if (!written.has(entry.filename)) throw invalid(`its provenance names ${JSON.stringify(entry.filename)}, a file it does not write`);
      const stray = entry.notes.find((note) => !notes.has(note));
      if (stray !== undefined) throw invalid(`its provenance cites ${JSON.stringify(stray)}, which is not one of its notes`);
    }
  }
  if (dispositions !== undefined) {
    if (!Array.isArray(dispositions) || dispositions.length > notes.size) throw invalid('its dispositions are not a list of its notes');
    for (const entry of dispositions) {
      if (
        !isObject(entry) ||
        !notes.has(String(entry.note)) ||
        !DISPOSITION_STATUSES.includes(entry.status as DispositionStatus) ||
        (entry.into !== undefined && !isStringList(entry.into)) ||
        (entry.by !== undefined && typeof entry.by !== 'string') ||
        (entry.reason !== undefined && typeof entry.reason !== 'string')
      ) {
        throw invalid('one of its dispositions is malformed, or names a note it does not hold');
      }
    }
  }
}
