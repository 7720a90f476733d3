import { isoSeconds } from '../../shared/time.js';
import type { CoreContext } from '../context.js';
import { toStamp } from '../note-name.js';
import type { RetentionEntry, SectionRetention } from '../retention/record.js';

/**
 * A consolidation commits as one unit. Everything it will write is computed first, then recorded
 * in `_consolidation/pending.json` with a create-only put: that put is the commit point. Before it,
 * nothing has changed. After it, `applyCommit` rolls the record forward — bank files, synthesis,
 * meta, notes moved into history, the record removed — and every step is idempotent, so a run cut
 * short at any instant (kill -9 included) is finished by the next consolidation, with every note
 * consolidated exactly once and no edit applied twice (the record holds final contents, not edits).
 * A stored record is checked before it is applied (pending.ts, then its kind's `verify`); its kind
 * (kind.ts, registered by core.ts) rolls it forward, with the steps commit.ts offers.
 *
 * A compaction (core/compaction) commits the same way: `kind: 'compaction'`, no notes, no
 * synthesis, and the pre-images of the sections it rewrote, kept in history beside its record. So does
 * a person's correction (core/revision): `kind: 'revision'`, bank files written or deleted whole, the
 * rules perhaps, each file's previous text kept as a pre-image (its heading path empty: the whole file).
 * And so does a person's forget (core/forget): `kind: 'forget'`, no writes, the notes to remove and
 * where each is kept (forget/roll-forward.ts rolls it forward).
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
  /** A consolidation: bank section ← notes, as its plan cited them (consolidation/provenance.ts); kept in record.json. */
  provenance?: ProvenanceEntry[];
  /** A consolidation: what became of each of its notes (consolidation/provenance.ts); kept in record.json. */
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
  /** Rewrite the space's backups without them too (forget/purge-backups.ts). */
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

/**
 * The fields a record of a kind that moves no notes (compaction, revision, forget) starts with:
 * its id (with `idSuffix`), space, kind and time, no notes and no writes yet.
 */
export function noteFreeRecord(
  context: CoreContext,
  spaceId: string,
  kind: 'compaction' | 'revision' | 'forget',
  idSuffix = '',
): Pick<CommitRecord, 'id' | 'space_id' | 'kind' | 'committed_at' | 'notes' | 'time_range' | 'writes'> {
  const now = context.clock();
  return {
    id: `${historyId(context, now)}${idSuffix}`,
    space_id: spaceId,
    kind,
    committed_at: isoSeconds(now),
    notes: [],
    time_range: { oldest: null, newest: null },
    writes: [],
  };
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

export interface FileWrite {
  filename: string;
  /** The file's new text ('' for a deletion). */
  content: string;
  /** The etag read before the plan; null for a new file. Writes are compare-and-swap against it. */
  expectedEtag: string | null;
  /** `deleted`: only a person's correction (core/revision) removes a bank file. */
  kind: 'created' | 'updated' | 'deleted';
}

/**
 * What a consolidation's record says of where the bank's text came from (consolidation/provenance.ts
 * accounts for a plan's citations): bank section ← notes, and what became of each note. Kept in the
 * commit record and in the history's record.json; a forget rewrites them (history-record.ts).
 */
export interface ProvenanceEntry {
  filename: string;
  /** Heading path, outermost first; [] when the whole file was written. */
  path: string[];
  /** Note file names, oldest first. */
  notes: string[];
}

export type DispositionStatus = 'integrated' | 'superseded' | 'discarded' | 'unaccounted';
export const DISPOSITION_STATUSES: readonly DispositionStatus[] = ['integrated', 'superseded', 'discarded', 'unaccounted'];

export interface Disposition {
  note: string;
  status: DispositionStatus;
  /** integrated: where, as `file.md` or `file.md#A > B` (or what the model named, e.g. the synthesis). */
  into?: string[];
  /** superseded: the note (file name) or what superseded it. */
  by?: string;
  /** discarded: why, one line. */
  reason?: string;
}
