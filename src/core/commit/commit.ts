import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { encodeHistoryPreimages } from './history.js';
import { kindOf } from './kind.js';
import type { CommitRecord } from './record.js';

/**
 * The commit point: the record (record.ts) written create-only at `_consolidation/pending.json`; from
 * here on, its kind's roll-forward (kind.ts) finishes it, in this run or the next holder of the space's
 * lease (space-lock.ts).
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

/**
 * A commit as every kind makes it: the lease checked, the record written (the commit point, with a
 * fault point on either side; `written` told its id), then rolled forward — by the kind's own
 * roll-forward, which a client calls with what only this run has, or `applyCommit`.
 */
export async function commitAndApply<T>(
  context: CoreContext,
  held: { stillHeld(): Promise<void> }, // space-lock.ts's SpaceLock, which imports this file
  record: CommitRecord,
  rollForward: () => Promise<T>,
  written?: (id: string) => void,
): Promise<T> {
  await context.fault('before-commit');
  await held.stillHeld();
  await writeCommit(context, record);
  written?.(record.id);
  await context.fault('after-commit');
  return rollForward();
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
 * Rolls a committed record forward by its registered kind (kind.ts). Safe to run any number of times.
 * A client may call its own roll-forward instead, to hand it what only it has (the notes a
 * consolidation read, a forget's receipt).
 */
export async function applyCommit(context: CoreContext, record: CommitRecord): Promise<void> {
  await kindOf(context.commitKinds, record).rollForward(context, record);
}

/**
 * The first step of a record that writes the bank: each file written or deleted, the synthesis and the
 * rules, compare-and-swap against the versions read before the commit (a step done already is skipped).
 */
export async function applyWrites(context: CoreContext, record: CommitRecord): Promise<void> {
  const keys = spaceKeys(record.space_id);
  for (const write of record.writes) {
    // A correction may name the synthesis as it names a bank file (no bank file may take that name).
    const [key, what] = write.filename === SYNTHESIS_FILE ? [keys.synthesis, 'the synthesis'] : [keys.bankFile(write.filename), `bank file ${write.filename}`];
    if (write.kind === 'deleted') await deleteOnce(context, key, write.expectedEtag, what);
    else await writeOnce(context, key, write.content, write.expectedEtag, what);
  }
  if (record.synthesis) await writeOnce(context, keys.synthesis, record.synthesis.content, record.synthesis.expectedEtag, 'the synthesis');
  if (record.rules) await writeOnce(context, keys.rules, record.rules.content, record.rules.expectedEtag, 'the rules');
  await context.fault('after-bank-writes');
}

/**
 * The last steps of a record that moves no note (a compaction, a correction): its pre-images, then its
 * history record (last: it says the entry is complete), then the pending record removed. `entry` is
 * what the kind adds to the history record; `first` runs before the entry is written, once the entry
 * exists no more (the kind's own clean-up, idempotent too).
 */
export async function finishWithPreimages(
  context: CoreContext,
  record: CommitRecord,
  options: { entry?: Record<string, unknown>; first?: () => Promise<void> } = {},
): Promise<void> {
  const { storage } = context;
  const keys = spaceKeys(record.space_id);
  if (!(await storage.stat(keys.historyRecord(record.id)))) {
    await options.first?.();
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
      ...options.entry,
    };
    await storage.put(keys.historyRecord(record.id), `${JSON.stringify(historyRecord, null, 2)}\n`, { contentType: 'application/json' });
  }
  await context.fault('after-history');
  await storage.delete(keys.pending);
}
