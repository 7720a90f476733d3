/**
 * The retention part of the benchmark page (bench-page.ts): the retention check's own figures on
 * LoCoMo (section 23, bench-retention.ts) with the mechanical check of the final bank against every
 * note written, and the long-lived space across consolidations and compactions (bench-bank-check.ts),
 * each figure with the load and a line saying what it does not show.
 */
import type { Figure } from './bench-lib.js';
import { checked, type Load, loadText } from './bench-page-figures.js';

/** What each retention figure (by key) does not show. */
const RETENTION_NOT: Record<string, string> = {
  retention_locomo_notes: 'Anything about the check: the count of notes it judged.',
  retention_locomo_flagged_share: 'Which flags are right: the two precision and recall rows say that.',
  retention_locomo_precision: 'A real model’s losses: the scripted model cuts every fourth note of a window to its first five words.',
  retention_locomo_note_recall: 'Losses subtler than a cut: a real model may keep the words and change the meaning.',
  retention_locomo_fact_recall: 'Facts the data does not list: a fact counts only if the data’s observations state it.',
  retention_locomo_false_flags: 'False flags on a bank at its budget: the long-lived space below measures those on a model that keeps every note.',
  retention_window_ms_p50: 'The whole consolidation’s time, only the check’s CPU per window of 30 notes.',
  retention_window_ms_p90: 'The same, the slow windows.',
  retention_locomo_held_notes:
    'A note’s meaning kept in other words: held means the note’s whole text, whitespace collapsed, is in a bank file or the synthesis, verbatim. The notes stay in history whatever the bank holds.',
  retention_locomo_held_share: 'The same check as a share: a real model paraphrases, and would score near 0 here while keeping every fact.',
  retention_locomo_held_vs_cut:
    'Whether the model’s record is right, only that the bank and the record agree: below 0 when a cut note is five words or fewer, so its fragment still holds it whole.',
  retention_locomo_held_facts:
    'Facts stated across several notes in other words: a fact of the data counts as held only when every one of its evidence turns is held verbatim.',
  bank_check_consolidations: 'Anything about the bank: the count of consolidations run, 30 notes each.',
  bank_check_failures: 'How a consolidation fails under a real model: the scripted one always answers a valid plan.',
  bank_check_compactions: 'What each compaction kept: the two final-bank rows say that.',
  bank_check_retention_checked: 'Compactions: the retention check judges each consolidation’s plan, not the compactions after it.',
  bank_check_retention_kept: 'What compactions later folded: a note the plan kept counts here even when a digest took its words.',
  bank_check_retention_false_flags: 'Losses: the model keeps every note, so every flag here is a false one.',
  bank_check_retention_committed_flags: 'The same after the check’s retry: the flags an operator would see.',
  bank_check_held:
    'A note’s other words: held means its made-up word (nine letters no other note holds) is in a bank file as a whole word; a note folded into a digest line is not, though its full text stays in history.',
  bank_check_named:
    'The note’s content: named means its id is in a bank file, alone or in a digest’s range (“f0001–f0012”); a digest names what it folded and drops the words.',
};

/** Counts print without decimals. */
const COUNTS = new Set([
  'retention_locomo_notes',
  'retention_locomo_held_notes',
  'retention_locomo_held_vs_cut',
  'bank_check_consolidations',
  'bank_check_failures',
  'bank_check_compactions',
  'bank_check_retention_checked',
]);

export function retentionSection(title: string, intro: string, figures: readonly Figure[], load: Load, seconds: number): string[] {
  const lines = [`### ${title}`, '', `${intro} ${seconds.toFixed(0)} s.`, '', '| figure | value | load | what it does not show |', '|---|---:|---|---|'];
  for (const fig of figures) {
    const not = RETENTION_NOT[fig.key];
    if (not === undefined) throw new Error(`benchmark page: the retention figure ${fig.key} has no line saying what it does not show`);
    const value = checked(fig.key, fig.value, COUNTS.has(fig.key) ? 0 : fig.unit === 'ms' ? 2 : 3);
    lines.push(`| ${fig.label.trim()}${fig.unit === 'ms' ? ' (ms)' : ''} | ${value} | ${loadText(load)} | ${not} |`);
  }
  return [...lines, ''];
}
