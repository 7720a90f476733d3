import { invalid, LiveMemError, unconfirmed } from '../../shared/errors.js';
import { contentVersion } from '../bank/bank-files.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { CommitRecord, FileWrite, Preimage, RevisionInfo } from '../commit/record.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import type { Redacted } from '../redact/redact.js';
import { quoteName } from '../validate.js';
import { openRevision, what } from './common.js';
import { commitRevision } from './revision-commit.js';
import { checkedRules, checkedText, readTargets, revisionToRevert, targetName, targetOf } from './targets.js';
import type { Planned, RevisionDeps, RevisionResult } from './types.js';

/**
 * A revision undone (bank_revert), as a new revision: what it changed put back from the pre-images
 * its record keeps, only while every file is as it left it. What a record says was there is input
 * like a person's text (an import may have brought it): every text put back passes a write's checks.
 */

export interface RevertInput {
  space_id: string;
  revision_id: string;
  confirm?: boolean;
  reason?: string;
}

/**
 * Puts back what a revision changed, as a new revision: each file its text before (a file the
 * revision created is deleted), the rules theirs. Only while every file is still as the revision
 * left it: a change made since (a consolidation, another correction) is never undone silently.
 */
export async function revert(deps: RevisionDeps, caller: Caller, input: RevertInput): Promise<RevisionResult> {
  const { context, corpus } = deps;
  const { spaceId, reason } = await openRevision(context, caller, input);
  const rid = typeof input.revision_id === 'string' ? input.revision_id : '';
  if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(rid)) throw invalid(`invalid revision_id ${JSON.stringify(rid)}`);
  if (input.confirm !== true) throw unconfirmed(`reverting revision ${rid} puts back the text every file had before it`);
  const target = await corpus.record(spaceId, rid);
  if (!target) throw new LiveMemError('not_found', `no revision '${rid}' in space '${spaceId}'`, { space_id: spaceId, revision_id: rid });
  if (target.kind !== 'revision' || !target.revision) {
    throw invalid(
      `${rid} is a ${target.kind}, not a revision: only a person's correction can be reverted (bank_write puts back any earlier text history_read shows)`,
    );
  }
  const info = revisionToRevert(target.revision, rid);
  const before = new Map((await corpus.historyPreimages(spaceId, rid)).map((preimage) => [preimage.filename, preimage.content]));
  const redacted: Redacted[] = [];
  const reverting: Reverting = { spaceId, rid, info, before, by: caller.agent, reason };
  const id = await commitRevision(deps, caller, spaceId, () => planRevert(context, reverting, redacted));
  const kinds = new Map<string, number>();
  for (const { kind, count } of redacted.flatMap((text) => text.redacted)) kinds.set(kind, (kinds.get(kind) ?? 0) + count);
  return {
    status: 'ok',
    space_id: spaceId,
    revision_id: id,
    reverted: rid,
    files: info.files.map((file) => file.filename),
    rules: info.rules !== undefined,
    ...(kinds.size > 0 ? { redacted: [...kinds].map(([kind, count]) => ({ kind, count })) } : {}),
  };
}

/** A revert as checked before the lease: the revision `rid`, what it changed (`info`) and each file's text before it. */
interface Reverting {
  spaceId: string;
  rid: string;
  info: RevisionInfo;
  before: ReadonlyMap<string, string>;
  by: string;
  reason: string | null;
}

/**
 * What reverting a revision writes, read under the lease: `conflict` if a file or the rules changed
 * since it. Each text put back is pushed on `redacted` as the checks left it.
 */
async function planRevert(context: CoreContext, reverting: Reverting, redacted: Redacted[]): Promise<Planned> {
  const { spaceId, rid, info, before, by, reason } = reverting;
  // What a revision record says was there is input like a person's text (an import may have brought
  // the record): every text put back passes the checks a write's does, its name too (targets.ts).
  const checked = <T>(check: () => T): T => {
    try {
      return check();
    } catch (error) {
      if (error instanceof LiveMemError && error.code === 'invalid_input')
        throw invalid(`revision ${rid} cannot be reverted: ${error.message}; nothing was reverted`, error.data);
      throw error;
    }
  };
  const targets = await readTargets(context, spaceId);
  const writes: FileWrite[] = [];
  const preimages: Preimage[] = [];
  const files: RevisionInfo['files'] = [];
  for (const file of info.files) {
    const now = targetOf(targets, file.filename);
    if ((now ? contentVersion(now.content) : null) !== file.version_after) {
      throw new LiveMemError(
        'conflict',
        `${what(file.filename)} changed since revision ${rid} (by a consolidation or another correction): nothing was reverted; history_read shows its earlier text, bank_write can put it back`,
        { space_id: spaceId, filename: file.filename },
      );
    }
    const previous = before.get(file.filename);
    if (file.existed && previous === undefined)
      throw new LiveMemError('storage_error', `history ${rid} has lost the earlier text of ${file.filename}`, { damaged: true });
    if (now) preimages.push({ filename: file.filename, path: [], content: now.content });
    if (previous === undefined) {
      writes.push({ filename: file.filename, content: '', expectedEtag: now?.etag ?? null, kind: 'deleted' });
      files.push({ filename: file.filename, existed: Boolean(now), version_after: null });
      continue;
    }
    const filename = checked(() => targetName(file.filename));
    if (filename !== file.filename) throw invalid(`revision ${rid} names ${quoteName(file.filename)}, not a name as stored: nothing was reverted`);
    const text = checked(() => checkedText(context, targets, filename, previous));
    redacted.push(text);
    if (!now && filename !== SYNTHESIS_FILE) targets.bank.set(filename, { content: text.text, etag: '' }); // counted by the next file's checks
    writes.push({ filename, content: text.text, expectedEtag: now?.etag ?? null, kind: now ? 'updated' : 'created' });
    files.push({ filename, existed: Boolean(now), version_after: contentVersion(text.text) });
  }
  let rules: CommitRecord['rules'];
  let rulesInfo: RevisionInfo['rules'];
  if (info.rules) {
    const current = await context.storage.get(spaceKeys(spaceId).rules);
    const text = current?.body.toString('utf8') ?? '';
    if (contentVersion(text) !== info.rules.version_after) {
      throw new LiveMemError('conflict', `the rules changed since revision ${rid}: nothing was reverted`, { space_id: spaceId });
    }
    const putBack = checked(() => checkedRules(context, (info.rules as { before: string }).before));
    redacted.push(putBack);
    rules = { content: putBack.text, expectedEtag: current?.etag ?? null };
    rulesInfo = { before: text, version_after: contentVersion(putBack.text) };
  }
  return {
    writes,
    preimages,
    ...(rules ? { rules } : {}),
    revision: { action: 'revert', by, reason, reverts: rid, files, ...(rulesInfo ? { rules: rulesInfo } : {}) },
  };
}
