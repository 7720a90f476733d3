import { invalid, LiveMemError, unconfirmed } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import { isStoredBankFilename, quoteName } from '../validate.js';
import { checkVersion, openRevision, secretKept, what } from './common.js';
import { commitRevision } from './revision-commit.js';
import { readTargets, targetOf } from './targets.js';
import type { RevisionDeps, RevisionResult } from './types.js';

/**
 * A person's delete (bank_delete): a bank file removed, confirmed, its text kept in history (but for
 * the lines a `secret` one removes), so that `bank_revert` brings it back.
 */

export interface BankDeleteInput {
  space_id: string;
  filename: string;
  confirm?: boolean;
  if_match?: string;
  reason?: string;
  secret?: boolean;
}

/** Deletes a bank file (its text kept in history: `bank_revert` brings it back). */
export async function deleteFile(deps: RevisionDeps, caller: Caller, input: BankDeleteInput): Promise<RevisionResult> {
  const { context } = deps;
  const { spaceId, reason } = await openRevision(context, caller, input);
  if (typeof input.filename !== 'string' || !isStoredBankFilename(input.filename)) throw invalid(`invalid bank filename ${quoteName(input.filename)}`);
  const filename = input.filename;
  if (input.confirm !== true)
    throw unconfirmed(
      `deleting ${what(filename)} removes it (its text stays in history${input.secret === true ? ', but for the secret' : ''}; bank_revert brings it back)`,
    );
  const id = await commitRevision(
    deps,
    caller,
    spaceId,
    async () => {
      const before = targetOf(await readTargets(context, spaceId), filename);
      if (!before) throw new LiveMemError('not_found', `${what(filename)} does not exist in space '${spaceId}'`, { space_id: spaceId, filename });
      if (input.if_match) checkVersion(what(filename), before.content, input.if_match, spaceId);
      return {
        writes: [{ filename, content: '', expectedEtag: before.etag, kind: 'deleted' }],
        preimages: [{ filename, path: [], content: before.content }],
        revision: { action: 'delete', by: caller.agent, reason, files: [{ filename, existed: true, version_after: null }] },
      };
    },
    { secret: input.secret === true },
  );
  return { status: 'deleted', space_id: spaceId, revision_id: id, filename, ...secretKept(input.secret) };
}
