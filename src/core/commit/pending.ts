import { createHash } from 'node:crypto';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { isPlainFileName, MAX_NAME_BYTES, utf8Bytes } from '../../shared/keys.js';
import { listKeys } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import { isStoredBankFilename, quoteName, validateBankFilename } from '../validate.js';
import type { CommitKinds } from './kind.js';
import type { CommitRecord } from './record.js';

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
export const MAX_RECORD_NOTES = 1_000_000;
const MAX_RECORD_WRITES = 10_000;
const MAX_RECORD_PREIMAGES = 1_000_000;
/** A history id: `{YYYYMMDDTHHMMSS}-{random}` today; any safe folder name is accepted. */
export const RECORD_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{0,99}$/;

/** Reads the space's pending record and checks it; storage errors are thrown (the record stays pending). */
export async function readPending(context: CoreContext, spaceId: string): Promise<PendingState> {
  const object = await context.storage.get(spaceKeys(spaceId).pending);
  if (!object) return { state: 'none' };
  return checkPending(object.body, spaceId, context.commitKinds);
}

/** Checks a record stored in `spaceId`'s folder: what every record holds, then what its kind's does (kind.ts); never throws. */
export function checkPending(body: Buffer, spaceId: string, kinds: CommitKinds): PendingState {
  let raw: unknown;
  try {
    if (body.length > MAX_RECORD_BYTES) throw invalid(`it is ${body.length} bytes, more than ${MAX_RECORD_BYTES}`);
    try {
      raw = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid('it is not JSON');
    }
    return { state: 'valid', record: parseRecord(raw, spaceId, kinds) };
  } catch (error) {
    if (!isLiveMemError(error)) throw error;
    const id = isObject(raw) && typeof raw.id === 'string' && RECORD_ID.test(raw.id) ? raw.id : undefined;
    return { state: 'invalid', problem: error.message, id, body };
  }
}

function parseRecord(raw: unknown, spaceId: string, kinds: CommitKinds): CommitRecord {
  if (!isObject(raw)) throw invalid('it is not a JSON object');
  const { id, space_id, kind, committed_at, notes, time_range, writes, metrics } = raw;
  if (typeof id !== 'string' || !RECORD_ID.test(id)) throw invalid(`its id ${JSON.stringify(id)} is no consolidation id`);
  const owner = kind === undefined || typeof kind === 'string' ? kinds.get(kind ?? 'consolidation') : undefined;
  if (!owner) throw invalid(`its kind ${JSON.stringify(kind)} is not ${listed([...kinds.keys()])}`);
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
    if (!isObject(write) || typeof write.content !== 'string' || !isStringOrNull(write.expectedEtag) || !WRITE_KINDS.includes(String(write.kind))) {
      throw invalid('one of its writes is malformed');
    }
    // The plan's rules; and the name as stored, in bytes (a name NFC shortens may be decomposed here).
    // A deletion may name any file a bank holds (a `CON.md` an older version wrote is removed like any other).
    // The synthesis's name is no bank file's: the record's kind says whether it may write it (checkBankWrites refuses it).
    if (write.filename === SYNTHESIS_FILE) {
      // checked by the record's kind
    } else if (write.kind === 'deleted') {
      if (!isStoredBankFilename(String(write.filename))) throw invalid(`it deletes ${quoteName(write.filename)}, which is no bank file name`);
    } else validateBankFilename(String(write.filename));
    if (utf8Bytes(String(write.filename)) > MAX_NAME_BYTES) throw invalid(`it writes ${quoteName(write.filename)}, longer than ${MAX_NAME_BYTES} bytes`);
    if (names.has(String(write.filename))) throw invalid(`it writes ${quoteName(write.filename)} twice`);
    names.add(String(write.filename));
  }
  owner.verify(raw, names);
  if (!isObject(metrics)) throw invalid('its metrics are malformed');
  return raw as unknown as CommitRecord;
}

const WRITE_KINDS = ['created', 'updated', 'deleted'];

/** `a, b or c`. */
const listed = (names: string[]): string => (names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`);

/**
 * For the kinds that only create or update bank files (all but a person's correction): no deletion,
 * no write of the synthesis's name. Throws `invalid_input`.
 */
export function checkBankWrites(writes: unknown): void {
  for (const write of writes as Array<Record<string, unknown>>) {
    if (write.kind === 'deleted') throw invalid('one of its writes is malformed');
    validateBankFilename(String(write.filename));
  }
}

/** Refuses a field the record's kind never holds: `message` says which kind does. */
export function refuseField(record: Readonly<Record<string, unknown>>, fields: readonly string[], message: string): void {
  if (fields.some((field) => record[field] !== undefined)) throw invalid(message);
}

/**
 * The pre-images of a record that keeps them (a compaction: sections; a correction: whole files):
 * a list, each a section of a file the record writes. Throws `invalid_input`.
 */
export function checkPreimages(preimages: unknown, written: ReadonlySet<string>): void {
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
    const state = checkPending(object.body, spaceId, context.commitKinds);
    const notes = state.state === 'valid' ? state.record.notes.length : 0;
    const id = state.state === 'valid' ? state.record.id : state.state === 'invalid' ? state.id : undefined;
    found.push({ key, id, notes, problem: state.state === 'invalid' ? state.problem : 'it was refused when it was found' });
  }
  return found;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
export const isStringOrNull = (value: unknown): boolean => value === null || typeof value === 'string';
