import { isoSeconds } from '../../shared/time.js';
import type { CoreContext } from '../context.js';
import type { AppliedPlan } from '../commit/apply-plan.js';
import { historyId, type CommitRecord } from '../commit/record.js';
import type { RetentionEntry } from '../retention/record.js';
import { stampToIso, type NoteName } from '../note-name.js';
import type { Accounting } from './provenance.js';

/**
 * A consolidation window's commit record (commit/record.ts), whoever wrote its plan: a configured
 * model, the client's model through sampling, or the agent itself (agent-plan.ts). `by` is who asked,
 * `model` what wrote the plan; both stay in the record's metrics, so provenance names the author.
 */
export function windowRecord(
  context: CoreContext,
  input: {
    spaceId: string;
    entries: ReadonlyArray<{ name: NoteName }>;
    applied: AppliedPlan;
    synthesis: { content: string; expectedEtag: string | null };
    accounting: Accounting;
    retention: { entries: RetentionEntry[] };
    by: string;
    model: string;
  },
): CommitRecord {
  const now = context.clock();
  const stamps = input.entries.map((entry) => entry.name.stamp);
  return {
    id: historyId(context, now),
    space_id: input.spaceId,
    committed_at: isoSeconds(now),
    notes: input.entries.map((entry) => entry.name.filename),
    time_range: { oldest: stampToIso(stamps[0] as string), newest: stampToIso(stamps[stamps.length - 1] as string) },
    writes: input.applied.writes,
    synthesis: input.synthesis,
    metrics: { notes: input.entries.length, operations: input.applied.operations, files: input.applied.writes.length, by: input.by, model: input.model },
    provenance: input.accounting.provenance,
    dispositions: input.accounting.dispositions,
    retention: input.retention.entries,
  };
}
