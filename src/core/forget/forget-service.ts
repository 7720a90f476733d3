import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { requireSpace } from '../space-meta.js';
import { validateReason, validateSpaceId } from '../validate.js';
import { dryRun } from './dry-run.js';
import { forgetNow } from './forget-commit.js';
import { selectNotes } from './select.js';
import type { ForgetDeps, ForgetInput } from './types.js';

export type { ForgetInput } from './types.js';

/**
 * Forget, with a receipt: notes removed for good, wherever they are kept — live/, the notes.json of the
 * consolidation that took them (its record noting the removal), the summaries covering them, the
 * search index of every process and its snapshots with the vectors — through consolidation's one
 * commit protocol (`kind: 'forget'`, commit-kind.ts), under the space's lease.
 * What it cannot remove is reported: bank files the consolidations that folded the notes wrote (they
 * may derive from them), and backups that still hold them. The steps are modules of their own
 * (select, review, dry-run, forget-commit, receipt); this module only checks the call and binds them
 * to the core's context, corpus, search and provenance.
 */
export function createForgetService(context: CoreContext, hooks: Omit<ForgetDeps, 'context'>) {
  const deps: ForgetDeps = { context, ...hooks };
  return {
    async forget(caller: Caller, input: ForgetInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'admin', spaceId);
      const reason = validateReason(input.reason);
      await requireSpace(context, spaceId);
      const names = await selectNotes(deps, caller, spaceId, input);
      return input.confirm === true ? forgetNow(deps, caller, spaceId, names, input, reason) : dryRun(deps, spaceId, names, input, reason);
    },
  };
}

export type ForgetService = ReturnType<typeof createForgetService>;
