import { LiveMemError } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note-name.js';
import { readRetention, retentionWithout, type RetentionEntry, type SectionRetention } from '../retention/record.js';
import { DISPOSITION_STATUSES, type Disposition, type ProvenanceEntry, type RevisionInfo } from './record.js';

/** `history/{id}/record.json`, as the kinds of commit write it (kind.ts); its readers are many (recall, doctor, history tools). */
export interface HistoryRecord {
  id: string;
  space_id: string;
  /** What wrote it; records written before compaction existed have none and are consolidations. */
  kind: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  /** Note file names, oldest first ([] for a compaction). */
  notes: string[];
  time_range: { oldest: string | null; newest: string | null };
  bank_files: Array<{ filename: string; kind: string }>;
  metrics: Record<string, unknown>;
  /** A compaction's or a revision's: how many sections (a revision: whole files) its preimages.json keeps. */
  preimages?: number;
  /** A revision's: who, why, what it did (see record.ts RevisionInfo). */
  revision?: RevisionInfo;
  /** A consolidation's: bank section ← notes, and what became of each note (record.ts); [] before they existed. */
  provenance: ProvenanceEntry[];
  dispositions: Disposition[];
  /** A consolidation's: what of each note the bank holds; a compaction's: what each digest kept (core/retention). [] before the check existed. */
  retention: Array<RetentionEntry | SectionRetention>;
  /** A forget's: who, why, how many notes, their names, the consolidations whose files it rewrote (never their text). */
  forget?: ForgetEntry;
  /** A consolidation's: notes a forget removed from it since (which, when, by whom, why). */
  forgotten?: Array<{ forget_id: string; filenames: string[]; at: string; by: string; reason: string | null }>;
}

export interface ForgetEntry {
  by: string;
  reason: string | null;
  notes_count: number;
  filenames: string[];
  consolidations: string[];
}

/** A forget's history id ends so (core/forget): every process finds forgets from a listing, without reading other records. */
export const FORGET_ID_SUFFIX = '-forget';
export const isForgetId = (cid: string): boolean => cid.endsWith(FORGET_ID_SUFFIX);

/** Only a consolidation moves notes into history; a compaction and a revision keep pre-images instead; a forget keeps nothing. */
export const keepsPreimages = (record: Pick<HistoryRecord, 'kind'>): boolean => record.kind === 'compaction' || record.kind === 'revision';

/**
 * The notes forgotten by the forgets committed since `since` (an ISO time; a forget in that same
 * second counts), or null when there is none: for state written outside the space's lease that may
 * quote notes (a job record saved as its run ends), to take them out itself. A listing of history,
 * then only the forgets' entries (their id says what they are).
 */
export async function forgottenSince(context: CoreContext, spaceId: string, since: string): Promise<Set<string> | null> {
  const root = spaceKeys(spaceId).history;
  const from = toStamp(new Date(since));
  // Ids start with their stamp: the listing starts there, not at the space's first consolidation.
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await context.storage.list(root, { delimiter: '/', ...(cursor === undefined ? { startAfter: `${root}${from}` } : { cursor }) });
    ids.push(...page.prefixes.map((prefix) => prefix.slice(root.length, -1)).filter(isForgetId));
    cursor = page.cursor;
  } while (cursor !== undefined);
  if (ids.length === 0) return null;
  const gone = new Set<string>();
  for (const id of ids) {
    const object = await context.storage.get(spaceKeys(spaceId).historyRecord(id));
    if (!object) continue; // its entry is being written: the forget cleans what it finds after
    try {
      for (const name of parseHistoryRecord(object.body, spaceId, id).forget?.filenames ?? []) gone.add(name);
    } catch {
      // a damaged entry names nothing (doctor reports it); the forget's own clean-up still ran
    }
  }
  return gone;
}

/** A `record.json` as read; `storage_error` (data `damaged`) when it is not a JSON object. */
export function parseHistoryRecord(body: Buffer, spaceId: string, cid: string): HistoryRecord {
  const damaged = (cause?: unknown) =>
    new LiveMemError(
      'storage_error',
      `history record ${cid} of space '${spaceId}' is not valid JSON`,
      { space_id: spaceId, consolidation_id: cid, damaged: true },
      cause === undefined ? {} : { cause },
    );
  let record: HistoryRecord;
  try {
    record = JSON.parse(body.toString('utf8')) as HistoryRecord;
  } catch (cause) {
    throw damaged(cause);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw damaged();
  const { preimages, revision, provenance, dispositions, forget, forgotten, retention, ...rest } = record;
  const kind = rest.kind === 'compaction' || rest.kind === 'revision' || rest.kind === 'forget' ? rest.kind : 'consolidation';
  return {
    ...rest,
    id: cid,
    kind,
    ...(kind !== 'consolidation' && Number.isInteger(preimages) ? { preimages } : {}),
    ...(kind === 'revision' && typeof revision === 'object' && revision !== null ? { revision } : {}),
    ...(kind === 'forget' && isForgetEntry(forget) ? { forget } : {}),
    ...(kind === 'consolidation' && Array.isArray(forgotten) ? { forgotten } : {}),
    notes: Array.isArray(record.notes) ? record.notes.filter((name) => typeof name === 'string') : [],
    bank_files: Array.isArray(record.bank_files) ? record.bank_files : [],
    time_range: typeof record.time_range === 'object' && record.time_range !== null ? record.time_range : { oldest: null, newest: null },
    metrics: typeof record.metrics === 'object' && record.metrics !== null ? record.metrics : {},
    ...citations(provenance, dispositions),
    retention: readRetention(retention),
  };
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** A record's provenance and dispositions, each entry kept only when well formed: a hand-edited record misleads no one. */
function citations(provenance: unknown, dispositions: unknown): Pick<HistoryRecord, 'provenance' | 'dispositions'> {
  const entries = Array.isArray(provenance) ? (provenance as Array<Partial<ProvenanceEntry> | null>) : [];
  const statuses = Array.isArray(dispositions) ? (dispositions as Array<Partial<Disposition> | null>) : [];
  return {
    provenance: entries.filter((e): e is ProvenanceEntry => typeof e?.filename === 'string' && isStrings(e.path) && isStrings(e.notes)),
    dispositions: statuses.filter((d): d is Disposition => typeof d?.note === 'string' && DISPOSITION_STATUSES.includes(d.status as Disposition['status'])),
  };
}

const isForgetEntry = (value: unknown): value is ForgetEntry =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as ForgetEntry).filenames) &&
  (value as ForgetEntry).filenames.every((name) => typeof name === 'string') &&
  Array.isArray((value as ForgetEntry).consolidations) &&
  (value as ForgetEntry).consolidations.every((cid) => typeof cid === 'string');

/**
 * A consolidation's record.json as it reads once `gone` notes are forgotten: its `notes`, and its
 * provenance, dispositions and retention, without them (a section none of whose notes is left loses its entry).
 * The one place both the store's history and a purged backup's copy are rewritten from (core/forget).
 */
export function recordWithout(raw: Record<string, unknown>, gone: ReadonlySet<string>): Record<string, unknown> {
  const keep = (name: unknown) => !gone.has(String(name));
  const next: Record<string, unknown> = { ...raw, notes: Array.isArray(raw.notes) ? raw.notes.filter(keep) : [] };
  if (Array.isArray(raw.provenance)) {
    next.provenance = (raw.provenance as Array<{ notes?: unknown }>)
      .map((entry) => ({ ...entry, notes: Array.isArray(entry?.notes) ? entry.notes.filter(keep) : [] }))
      .filter((entry) => entry.notes.length > 0);
  }
  if (Array.isArray(raw.dispositions)) {
    next.dispositions = (raw.dispositions as Array<{ note?: unknown; by?: unknown }>)
      .filter((entry) => keep(entry?.note))
      .map((entry) => (entry.by !== undefined && !keep(entry.by) ? { ...entry, by: '(a forgotten note)' } : entry));
  }
  // What the retention check says of a note quotes it: it goes with the note.
  if (raw.retention !== undefined) next.retention = retentionWithout(raw.retention, gone);
  return next;
}

/**
 * A consolidation's record.json without its copy of the synthesis it wrote, a note of the removal in
 * its place (what removed it, when): a forget's (the synthesis may quote a forgotten note, and each
 * consolidation carries the last one forward), or a correction's that took a secret out of the
 * synthesis. Null when it holds none (a compaction's, a revision's, one cleaned already).
 */
export function recordWithoutSynthesis(
  raw: Record<string, unknown>,
  removal: { at: string } & ({ forget_id: string } | { revision_id: string }),
): Record<string, unknown> | null {
  if (raw.synthesis === undefined) return null;
  const { synthesis: _dropped, ...rest } = raw;
  return { ...rest, synthesis_removed: removal };
}
