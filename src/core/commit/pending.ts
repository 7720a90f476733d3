import { createHash } from 'node:crypto';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { isPlainFileName, MAX_NAME_BYTES, utf8Bytes } from '../../shared/keys.js';
import { listKeys } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import { isStoredBankFilename, quoteName, validateBankFilename } from '../validate.js';
import { checkRetention } from '../retention/record.js';
import { type CommitRecord, DISPOSITION_STATUSES, type DispositionStatus } from './record.js';

/**
 * `_consolidation/pending.json` is input like any other: a store can be written by hand, restored,
 * or carry a record from another version. A record is applied only to the space whose folder holds
 * it, and only once all of it checks out; before any write. One that does not is quarantined (moved
 * to `_consolidation/quarantine/`, never applied, its notes left in live/), so it cannot
 * wedge the space. A failure to read it (a store down, a full disk) is no verdict: it stays pending.
 */
export type PendingState =
  | { state: 'none' }
  | { state: 'valid'; record: CommitRecord }
  | { state: 'invalid'; problem: string; id: string | undefined; body: Buffer };

/** A record larger than this is no consolidation's: a plan's files all fit one model reply and the bank it read. */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Generous bounds on a record's lists, far past what a consolidation writes. */
const MAX_RECORD_NOTES = 1_000_000;
const MAX_RECORD_WRITES = 10_000;
const MAX_RECORD_PREIMAGES = 1_000_000;
/** A consolidation id: `{YYYYMMDDTHHMMSS}-{random}` today; any safe folder name is accepted. */
const RECORD_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{0,99}$/;

/** Reads the space's pending record and checks it; storage errors are thrown (the record stays pending). */
export async function readPending(context: CoreContext, spaceId: string): Promise<PendingState> {
  const object = await context.storage.get(spaceKeys(spaceId).pending);
  if (!object) return { state: 'none' };
  return checkPending(object.body, spaceId);
}

/** Checks a record stored in `spaceId`'s folder; never throws. */
export function checkPending(body: Buffer, spaceId: string): PendingState {
  let raw: unknown;
  try {
    if (body.length > MAX_RECORD_BYTES) throw invalid(`it is ${body.length} bytes, more than ${MAX_RECORD_BYTES}`);
    try {
      raw = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid('it is not JSON');
    }
    return { state: 'valid', record: parseRecord(raw, spaceId) };
  } catch (error) {
    if (!isLiveMemError(error)) throw error;
    const id = isObject(raw) && typeof raw.id === 'string' && RECORD_ID.test(raw.id) ? raw.id : undefined;
    return { state: 'invalid', problem: error.message, id, body };
  }
}

function parseRecord(raw: unknown, spaceId: string): CommitRecord {
  if (!isObject(raw)) throw invalid('it is not a JSON object');
  const {
    id,
    space_id,
    kind,
    committed_at,
    notes,
    time_range,
    writes,
    synthesis,
    metrics,
    preimages,
    rules,
    revision,
    provenance,
    dispositions,
    forget,
    retention,
  } = raw;
  if (typeof id !== 'string' || !RECORD_ID.test(id)) throw invalid(`its id ${JSON.stringify(id)} is no consolidation id`);
  if (kind !== undefined && kind !== 'consolidation' && kind !== 'compaction' && kind !== 'revision' && kind !== 'forget')
    throw invalid(`its kind ${JSON.stringify(kind)} is not consolidation, compaction, revision or forget`);
  if (space_id !== spaceId) throw invalid(`it names space ${JSON.stringify(space_id)}, but it is stored in '${spaceId}'`);
  if (typeof committed_at !== 'string' || Number.isNaN(Date.parse(committed_at))) throw invalid('its committed_at is no date');
  if (!Array.isArray(notes) || notes.length > MAX_RECORD_NOTES) throw invalid('its notes are not a list (or an endless one)');
  for (const note of notes) {
    if (typeof note !== 'string' || !isPlainFileName(note) || !parseNoteName(note)) throw invalid(`it names ${quoteName(note)}, which is no note file name`);
  }
  if (!isObject(time_range) || !isStringOrNull(time_range.oldest) || !isStringOrNull(time_range.newest)) throw invalid('its time_range is malformed');
  if (!Array.isArray(writes) || writes.length > MAX_RECORD_WRITES) throw invalid('its writes are not a list (or an endless one)');
  const names = new Set<string>();
  for (const write of writes) {
    const kinds = kind === 'revision' ? ['created', 'updated', 'deleted'] : ['created', 'updated'];
    if (!isObject(write) || typeof write.content !== 'string' || !isStringOrNull(write.expectedEtag) || !kinds.includes(String(write.kind))) {
      throw invalid('one of its writes is malformed');
    }
    // The plan's rules; and the name as stored, in bytes (a name NFC shortens may be decomposed here).
    // A deletion may name any file a bank holds (a `CON.md` an older version wrote is removed like any other).
    // A correction may name the synthesis (revision/targets.ts); nothing else may.
    if (kind === 'revision' && write.filename === SYNTHESIS_FILE) {
      // the synthesis, written or deleted by a person
    } else if (write.kind === 'deleted') {
      if (!isStoredBankFilename(String(write.filename))) throw invalid(`it deletes ${quoteName(write.filename)}, which is no bank file name`);
    } else validateBankFilename(String(write.filename));
    if (utf8Bytes(String(write.filename)) > MAX_NAME_BYTES) throw invalid(`it writes ${quoteName(write.filename)}, longer than ${MAX_NAME_BYTES} bytes`);
    if (names.has(String(write.filename))) throw invalid(`it writes ${quoteName(write.filename)} twice`);
    names.add(String(write.filename));
  }
  if (kind === 'forget') {
    // Its id says what it is: every process finds forgets from a listing of history (history-record.ts).
    if (!id.endsWith('-forget')) throw invalid(`it is a forget, but its id ${JSON.stringify(id)} does not end in -forget`);
    checkForget(notes, writes, synthesis, preimages, forget);
  } else if (kind === 'compaction') {
    checkCompaction(notes, synthesis, preimages, names);
  } else if (kind === 'revision') {
    checkRevision(notes, synthesis, preimages, names, rules, revision);
  } else {
    if (!isObject(synthesis) || typeof synthesis.content !== 'string' || !isStringOrNull(synthesis.expectedEtag)) throw invalid('its synthesis is malformed');
    if (preimages !== undefined) throw invalid('it holds pre-images, which only a compaction has');
  }
  if (kind !== 'revision' && (rules !== undefined || revision !== undefined)) throw invalid('it changes the rules, which only a revision does');
  if (kind !== 'forget' && forget !== undefined) throw invalid('it forgets notes, which only a forget does');
  if (kind === 'compaction' || kind === 'revision' || kind === 'forget') {
    if (provenance !== undefined || dispositions !== undefined) throw invalid(`it is a ${kind}, but it cites notes`);
  } else checkProvenance(provenance, dispositions, new Set(notes as string[]), names);
  if (kind === 'revision' || kind === 'forget') {
    if (retention !== undefined) throw invalid(`it is a ${kind}, but it has a retention check`);
  } else checkRetention(retention, { kind: kind === 'compaction' ? 'compaction' : 'consolidation', notes: new Set(notes as string[]), written: names });
  if (!isObject(metrics)) throw invalid('its metrics are malformed');
  return raw as unknown as CommitRecord;
}

/** A revision moves no note and leaves the synthesis alone; its pre-images are whole files it writes; it says who and why. */
function checkRevision(notes: unknown[], synthesis: unknown, preimages: unknown, written: ReadonlySet<string>, rules: unknown, revision: unknown): void {
  if (notes.length > 0 || synthesis !== undefined) throw invalid('it is a revision, but it names notes or writes the synthesis');
  checkCompaction([], undefined, preimages, written);
  if ((preimages as Array<{ path: unknown[] }>).some((preimage) => preimage.path.length > 0)) throw invalid('a revision keeps whole files, not sections');
  if (rules !== undefined && (!isObject(rules) || typeof rules.content !== 'string' || !isStringOrNull(rules.expectedEtag)))
    throw invalid('its rules are malformed');
  if (
    !isObject(revision) ||
    !['write', 'delete', 'rules', 'revert', 'normalize'].includes(String(revision.action)) ||
    typeof revision.by !== 'string' ||
    !isStringOrNull(revision.reason) ||
    !Array.isArray(revision.files)
  ) {
    throw invalid('its revision (action, by, reason, files) is malformed');
  }
  const copies = revision.synthesis_copies;
  if (copies !== undefined && (!Array.isArray(copies) || !copies.every((cid) => typeof cid === 'string' && RECORD_ID.test(cid))))
    throw invalid('its synthesis_copies are not history ids');
}

/**
 * A forget writes nothing but removes: it names each note (a note file name) and the consolidation
 * holding it (a history id, or null), says who and why, and has no writes, synthesis or pre-images.
 */
function checkForget(notes: unknown[], writes: unknown[], synthesis: unknown, preimages: unknown, forget: unknown): void {
  if (notes.length > 0 || writes.length > 0 || synthesis !== undefined || preimages !== undefined)
    throw invalid('it is a forget, but it moves notes, writes files or keeps pre-images');
  if (!isObject(forget) || typeof forget.by !== 'string' || !isStringOrNull(forget.reason) || !Array.isArray(forget.notes) || forget.notes.length === 0)
    throw invalid('its forget (by, reason, notes) is malformed');
  if (forget.purge_backups !== undefined && typeof forget.purge_backups !== 'boolean') throw invalid('its purge_backups is no boolean');
  if (forget.notes.length > MAX_RECORD_NOTES) throw invalid('it forgets an endless list of notes');
  for (const note of forget.notes) {
    const filename = isObject(note) ? note.filename : undefined;
    if (typeof filename !== 'string' || !isPlainFileName(filename) || !parseNoteName(filename))
      throw invalid(`it forgets ${quoteName(filename)}, which is no note file name`);
    const cid = (note as Record<string, unknown>).consolidation_id;
    if (cid !== null && (typeof cid !== 'string' || !RECORD_ID.test(cid))) throw invalid(`it names ${JSON.stringify(cid)}, which is no history id`);
  }
}

/** A compaction moves no note and leaves the synthesis alone; its pre-images are sections of the files it writes. */
function checkCompaction(notes: unknown[], synthesis: unknown, preimages: unknown, written: ReadonlySet<string>): void {
  if (notes.length > 0) throw invalid('it is a compaction, but it names notes');
  if (synthesis !== undefined) throw invalid('it is a compaction, but it writes the synthesis');
  if (!Array.isArray(preimages) || preimages.length > MAX_RECORD_PREIMAGES) throw invalid('its preimages are not a list (or an endless one)');
  for (const preimage of preimages) {
    if (
      !isObject(preimage) ||
      typeof preimage.content !== 'string' ||
      !Array.isArray(preimage.path) ||
      !preimage.path.every((part) => typeof part === 'string') ||
      !written.has(String(preimage.filename))
    ) {
      throw invalid('one of its preimages is malformed, or names a file it does not write');
    }
  }
}

/**
 * Moves an invalid record out of the way, to `_consolidation/quarantine/{id}-{hash}.json`, byte for
 * byte: copied create-only first, then removed, so a run cut short in between does it again the
 * same way. Returns the key it is kept at.
 */
export async function quarantinePending(context: CoreContext, spaceId: string, found: Extract<PendingState, { state: 'invalid' }>): Promise<string> {
  const keys = spaceKeys(spaceId);
  const hash = createHash('sha256').update(found.body).digest('hex').slice(0, 16);
  const key = keys.quarantined(`${found.id ?? 'record'}-${hash}`);
  try {
    await context.storage.put(key, found.body, { ifNoneMatch: '*', contentType: 'application/json' });
  } catch (error) {
    if (!isLiveMemError(error, 'precondition_failed')) throw error; // there already: the same bytes (the name says so)
  }
  await context.storage.delete(keys.pending);
  return key;
}

/** What a quarantined record was, for `doctor`: its key, its id and why it was refused. */
export async function listQuarantined(
  context: CoreContext,
  spaceId: string,
): Promise<Array<{ key: string; id: string | undefined; problem: string; notes: number }>> {
  const keys = spaceKeys(spaceId);
  const found = [];
  for (const key of await listKeys(context.storage, keys.quarantine)) {
    const object = await context.storage.get(key);
    if (!object) continue;
    const state = checkPending(object.body, spaceId);
    const notes = state.state === 'valid' ? state.record.notes.length : 0;
    const id = state.state === 'valid' ? state.record.id : state.state === 'invalid' ? state.id : undefined;
    found.push({ key, id, notes, problem: state.state === 'invalid' ? state.problem : 'it was refused when it was found' });
  }
  return found;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringOrNull = (value: unknown): boolean => value === null || typeof value === 'string';
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Checks a stored record's provenance and dispositions (a record is input); both are
 * optional (records written before they existed). Every note named must be one of the record's, every
 * file one it writes. Throws `invalid_input`.
 */
export function checkProvenance(provenance: unknown, dispositions: unknown, notes: ReadonlySet<string>, written: ReadonlySet<string>): void {
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
