import { invalid, LiveMemError } from '../../shared/errors.js';
import { contentVersion } from '../bank/bank-files.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE } from '../layout.js';
import type { Redacted } from '../redact/redact.js';
import { requireSpace } from '../space-meta.js';
import { validateReason, validateSpaceId } from '../validate.js';

/**
 * What the revision kinds share around their plans: the opening checks (an admin of a space that
 * exists, a reason), the compare-and-swap against the version the caller read, how a file is named
 * in messages, and what an answer says was kept out — in one place so that the kinds cannot drift
 * apart on who may correct or on when a change made since is refused.
 */

/** The space a correction is for, once the caller may administer it and it exists, and its reason. */
export async function openRevision(context: CoreContext, caller: Caller, input: { space_id: string; reason?: string }) {
  const spaceId = validateSpaceId(input.space_id);
  authorize(caller, 'admin', spaceId);
  const reason = validateReason(input.reason);
  await requireSpace(context, spaceId);
  return { spaceId, reason };
}

/** `conflict` unless the caller read the version there is now (`null`: the caller expects no file). */
export function checkVersion(what: string, current: string | undefined, ifMatch: string | undefined, spaceId: string): void {
  if (current === undefined) {
    if (ifMatch !== undefined && ifMatch !== '') {
      throw new LiveMemError('conflict', `${what} does not exist (any more) in space '${spaceId}': it was not changed`, { space_id: spaceId });
    }
    return;
  }
  if (ifMatch === undefined || ifMatch === '') {
    throw invalid(`${what} exists: pass if_match, the version you read (bank_read and space_rules give it), so a change made since is never overwritten`);
  }
  if (ifMatch !== contentVersion(current)) {
    throw new LiveMemError(
      'conflict',
      `${what} changed since you read it (version ${ifMatch}, now ${contentVersion(current)}): it was not changed; read it again and redo your change`,
      { space_id: spaceId, version: contentVersion(current) },
    );
  }
}

/** How a file of a correction is named in messages: the synthesis, or a bank file. */
export const what = (filename: string): string => (filename === SYNTHESIS_FILE ? 'the synthesis' : `bank file ${filename}`);

/** What the answer says was kept out of a person's text (never the secret itself), when anything was. */
export const keptOut = (redaction: Redacted | undefined) => ({
  ...(redaction && redaction.redacted.length > 0 ? { redacted: redaction.redacted } : {}),
  ...(redaction && redaction.private_removed > 0 ? { private_removed: redaction.private_removed } : {}),
});

/** What the answer says of a correction's `secret`: the removed lines are kept nowhere. */
export const secretKept = (secret: boolean | undefined) =>
  secret === true ? { secret: true, message: 'the lines removed are kept nowhere: history keeps the earlier text without them' } : {};
