/**
 * The benchmark page's retention across consolidations and compactions: section 15's long-lived space
 * (bench-growth.ts: notes of 30 a window, each with an id and a made-up word no other note holds,
 * consolidated by a scripted model that keeps every note as a dated line, LIVE_MEM_COMPACTION=auto in
 * a 32,768-token window, so compactions digest the oldest sections once the bank is at its budget),
 * run for N consolidations; then the retention check's own figures for that run, and a mechanical
 * check of the final bank against every note written: a note is held when its made-up word is in a
 * bank file (as a whole word), named when its id is, alone or inside a range ("f0001–f0012": a lossy
 * digest names the ids of the entries it folded, bench-growth-model.ts idsIn).
 */
import { atMost, figure, type Figure } from './bench-lib.js';
import { type GrowthNote, growthNotes, growthRun } from './bench-growth.js';
import { idsIn } from './bench-growth-model.js';

/** The made-up word of a note: the first word of its query (bench-growth.ts growthNotes). */
const ownWord = (note: GrowthNote): string => note.query.split(' ')[0] as string;

export async function bankCheck(consolidations: number): Promise<Figure[]> {
  const windows = growthNotes().slice(0, consolidations);
  const notes = windows.flat();
  const run = await growthRun('auto', windows);
  const failed = run.steps.filter((step) => step.status !== 'ok').length;
  const compactions = run.calls.filter((call) => call.purpose === 'compaction').length;
  const kept = run.steps.reduce((sum, step) => sum + step.retention.checked - step.retention.letGo, 0);
  const checked = run.steps.reduce((sum, step) => sum + step.retention.checked, 0);
  const firstFlagged = run.calls.reduce((sum, call) => sum + (call.retentionFlagged ?? 0), 0);
  const committedFlagged = run.steps.reduce((sum, step) => sum + step.retention.flagged, 0);
  const words = new Set(run.bankText.match(/[\p{L}\p{N}]+/gu) ?? []);
  const ids = new Set(idsIn(run.bankText));
  const held = notes.filter((note) => words.has(ownWord(note))).length;
  const named = notes.filter((note) => ids.has(note.id)).length;
  const ratio = (a: number, b: number) => (b > 0 ? a / b : null);
  return [
    figure('bank_check_consolidations', `long-lived space, compaction auto: consolidations run (${notes.length} notes written)`, run.steps.length, 'ratio'),
    figure('bank_check_failures', '  consolidations failed', failed, 'ratio', atMost(0)),
    figure('bank_check_compactions', '  compactions (model calls)', compactions, 'ratio'),
    figure('bank_check_retention_checked', '  retention check: notes checked', checked, 'ratio'),
    figure('bank_check_retention_kept', '  retention check: notes the plans kept (integrated or superseded)', ratio(kept, checked), 'ratio'),
    figure('bank_check_retention_false_flags', '  retention check: kept notes flagged, first check of each window', ratio(firstFlagged, kept), 'ratio'),
    figure('bank_check_retention_committed_flags', '  retention check: kept notes committed flagged', ratio(committedFlagged, kept), 'ratio'),
    figure('bank_check_held', `  final bank: notes whose own word it holds (of ${notes.length})`, ratio(held, notes.length), 'ratio'),
    figure('bank_check_named', `  final bank: notes whose id it names (of ${notes.length})`, ratio(named, notes.length), 'ratio'),
  ];
}
