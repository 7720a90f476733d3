import { invalid } from '../../shared/errors.js';
import { checkRetention } from '../retention/record.js';
import { applyWrites, finishWithPreimages } from '../commit/commit.js';
import type { CommitKind } from '../commit/kind.js';
import { checkBankWrites, checkPreimages, refuseField } from '../commit/pending.js';

/**
 * A compaction as a kind of commit (commit/kind.ts): its record rewrites sections of bank files and
 * keeps each as it was (its pre-images); it moves no note, leaves the synthesis alone, and says what
 * each digest kept of its section (core/retention).
 */
export const compactionCommit: CommitKind = {
  kind: 'compaction',
  verify(record, written) {
    checkBankWrites(record.writes);
    if ((record.notes as unknown[]).length > 0) throw invalid('it is a compaction, but it names notes');
    if (record.synthesis !== undefined) throw invalid('it is a compaction, but it writes the synthesis');
    checkPreimages(record.preimages, written);
    refuseField(record, ['rules', 'revision'], 'it changes the rules, which only a revision does');
    refuseField(record, ['forget'], 'it forgets notes, which only a forget does');
    refuseField(record, ['provenance', 'dispositions'], 'it is a compaction, but it cites notes');
    checkRetention(record.retention, { kind: 'compaction', notes: new Set(), written });
  },
  async rollForward(context, record) {
    await applyWrites(context, record);
    await finishWithPreimages(context, record, record.retention ? { entry: { retention: record.retention } } : {});
  },
};
