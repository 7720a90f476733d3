import type { Caller } from '../caller.js';
import { commitAndApply } from '../commit/commit.js';
import type { SpaceLock } from '../commit/space-lock.js';
import type { NoteName } from '../note-name.js';
import type { ConsolidationDeps } from './types.js';
import { type Claim, dropClaim } from './claim.js';
import { rollForwardConsolidation } from './commit-kind.js';
import type { CheckedPlan } from './plan-window.js';
import { accountingWarnings } from './provenance.js';
import type { ConsolidationResult } from './result.js';
import { addToSummary, retentionWarning } from './retention.js';
import { overBudgetWithoutModel } from './unbudgeted.js';
import { pendingNotes } from './window.js';
import { windowRecord } from './window-record.js';

/**
 * The last step of an agent's plan (agent-submit.ts), once every check passed: the one commit
 * protocol a model's plan goes through (commit/commit.ts), the agent named as author, then the
 * result in the shape every consolidation path answers (result.ts). Apart from the checks because
 * nothing here may refuse the plan: from the commit on, the window is consolidated.
 */

/** The claimed window whose plan passed its checks: its notes, their bodies, the checked plan and the synthesis it replaces. */
export interface CheckedWindow {
  names: NoteName[];
  bodies: Array<{ body: Buffer }>;
  checked: CheckedPlan;
  synthesis: string;
}

/** Commits `window` under the lease `held`, drops `claim`, and answers what was done; `started` is the submit's monotonic start. */
export async function commitAgentPlan(
  { context, hooks }: ConsolidationDeps,
  caller: Caller,
  spaceId: string,
  claim: Claim,
  window: CheckedWindow,
  held: SpaceLock,
  started: number,
): Promise<ConsolidationResult> {
  const { plan, applied, accounting, retention } = window.checked;
  const record = windowRecord(context, {
    spaceId,
    entries: window.names.map((name) => ({ name })),
    applied,
    synthesis: { content: plan.synthesis, expectedEtag: claim.synthesis_etag },
    accounting,
    retention,
    by: caller.agent,
    model: `agent:${caller.agent}`,
  });
  const bodies = new Map(window.names.map((name, i) => [name.filename, (window.bodies[i] as { body: Buffer }).body]));
  await commitAndApply(context, held, record, () => rollForwardConsolidation(context, record, bodies));
  await dropClaim(context, spaceId, claim.handle);
  hooks.onCommitted?.(spaceId, {
    files: applied.writes.map((w) => ({ filename: w.filename, kind: w.kind })),
    synthesis: plan.synthesis !== window.synthesis,
  });
  const warnings = [...held.warnings, ...accountingWarnings(accounting, plan, 'the window')];
  const lost = retentionWarning(retention.entries, 'the window', context.retention);
  if (lost) warnings.push(lost);
  warnings.push(...(await overBudgetWithoutModel(context, spaceId, applied.writes)));
  const remaining = (await pendingNotes(context, spaceId, undefined)).length;
  context.logger.info(`consolidation of '${spaceId}' by agent ${caller.agent}: ok`, { notes_processed: window.names.length, consolidation_id: record.id });
  return {
    status: 'ok',
    space_id: spaceId,
    by: caller.agent,
    notes_processed: window.names.length,
    notes_remaining: remaining,
    bank_files_created: applied.writes.filter((w) => w.kind === 'created').length,
    bank_files_updated: applied.writes.filter((w) => w.kind === 'updated').length,
    bank_files_unchanged: applied.unchanged,
    operations_applied: applied.operations,
    operations_failed: 0,
    synthesis_size: Buffer.byteLength(plan.synthesis),
    synthesis_compressed: false,
    llm_prompt_tokens: 0,
    llm_completion_tokens: 0,
    llm_tokens_used: 0,
    llm_calls: 0,
    duration_seconds: Math.round(context.monotonic() - started) / 1000,
    windows: 1,
    consolidations: [record.id],
    retention: addToSummary(undefined, context.retention, retention.entries),
    ...(accounting.unaccounted.length > 0 ? { unaccounted_notes: accounting.unaccounted } : {}),
    ...(held.recovered ? { recovered: held.recovered } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    next:
      remaining > 0
        ? `${remaining} live notes still wait: ask for the next window when you can (bank_consolidate), or leave them for later`
        : 'no live note waits: the bank is up to date',
  };
}
