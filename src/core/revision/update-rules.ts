import { invalid } from '../../shared/errors.js';
import { contentVersion } from '../bank/bank-files.js';
import type { Caller } from '../caller.js';
import { spaceKeys } from '../layout.js';
import { checkVersion, keptOut, openRevision, secretKept } from './common.js';
import { commitRevision } from './revision-commit.js';
import { checkedRules } from './targets.js';
import type { RevisionDeps, RevisionResult } from './types.js';

/**
 * A person's change of a space's rules (space_update_rules): the whole text replaced, against the
 * version the caller read, the new rules through the checks every person's text meets (targets.ts);
 * the rules before are kept in the revision's record.
 */

export interface RulesUpdateInput {
  space_id: string;
  rules: string;
  if_match?: string;
  reason?: string;
  secret?: boolean;
}

/** Replaces the space's rules (which bank files exist and what each holds; budgets, append-only files). */
export async function updateRules(deps: RevisionDeps, caller: Caller, input: RulesUpdateInput): Promise<RevisionResult> {
  const { context } = deps;
  const { spaceId, reason } = await openRevision(context, caller, input);
  const redaction = checkedRules(context, typeof input.rules === 'string' ? input.rules : '');
  const rules = redaction.text;
  const version = contentVersion(rules);
  const id = await commitRevision(
    deps,
    caller,
    spaceId,
    async () => {
      const stored = await context.storage.get(spaceKeys(spaceId).rules);
      const before = stored?.body.toString('utf8');
      checkVersion('the rules', before ?? '', input.if_match, spaceId);
      if (before === rules) throw invalid('the new rules are the rules there are; nothing to change');
      return {
        writes: [],
        preimages: [],
        rules: { content: rules, expectedEtag: stored?.etag ?? null },
        revision: { action: 'rules', by: caller.agent, reason, files: [], rules: { before: before ?? '', version_after: version } },
      };
    },
    { secret: input.secret === true },
  );
  return { status: 'ok', space_id: spaceId, revision_id: id, version, ...keptOut(redaction), ...secretKept(input.secret) };
}
