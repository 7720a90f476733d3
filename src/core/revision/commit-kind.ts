import { invalid } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { isIndexFile, spaceKeys } from '../layout.js';
import { applyWrites, finishWithPreimages } from '../commit/commit.js';
import { recordWithoutSynthesis } from '../commit/history-record.js';
import type { CommitKind } from '../commit/kind.js';
import { checkPreimages, isObject, isStringOrNull, RECORD_ID, refuseField } from '../commit/pending.js';
import type { CommitRecord } from '../commit/record.js';

/**
 * A person's correction as a kind of commit (commit/kind.ts), a revision: its record writes or
 * deletes bank files whole (the synthesis too), the rules perhaps, keeps each file as it was (a
 * pre-image with an empty heading path), and says who, why and what (RevisionInfo). It moves no note.
 * One that took a secret out cleans, before its history entry, the copies of the secret it knows of.
 */
export const revisionCommit: CommitKind = {
  kind: 'revision',
  verify(record, written) {
    const { preimages, rules, revision } = record;
    if ((record.notes as unknown[]).length > 0 || record.synthesis !== undefined) throw invalid('it is a revision, but it names notes or writes the synthesis');
    checkPreimages(preimages, written);
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
    refuseField(record, ['forget'], 'it forgets notes, which only a forget does');
    refuseField(record, ['provenance', 'dispositions'], 'it is a revision, but it cites notes');
    refuseField(record, ['retention'], 'it is a revision, but it has a retention check');
  },
  async rollForward(context, record) {
    await applyWrites(context, record);
    await finishWithPreimages(context, record, {
      entry: record.revision ? { revision: record.revision } : {},
      first: () => removeSecretCopies(context, record),
    });
  },
};

/**
 * A correction that took a secret out: the index snapshots hold the words of the bank (every process
 * writes new ones); one that took it out of the synthesis: the history records' copies holding it
 * (idempotent: a copy gone stays gone).
 */
async function removeSecretCopies(context: CoreContext, record: CommitRecord): Promise<void> {
  const { storage } = context;
  const keys = spaceKeys(record.space_id);
  if (record.revision?.secret) await storage.deleteMany((await listKeys(storage, keys.index)).filter(isIndexFile));
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
}
