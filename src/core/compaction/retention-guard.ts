import { invalid } from '../../shared/errors.js';
import type { ChatMessage } from '../../llm/types.js';
import { measureTokens } from '../bank/budget.js';
import { fenceReason } from '../prompt-fence.js';
import { checkDigested } from '../retention/check.js';
import { describeMissing, type RetentionMode, type SectionRetention } from '../retention/record.js';
import type { SplitFile } from './sections.js';

/**
 * The retention guard of a compaction: a digest keeps the facts its section held (dated lines,
 * numbers, names, identifiers: core/retention), as the verbatim guard keeps dated lines and code,
 * unless the file cannot reach its target otherwise. Items a digest left out that the file had room
 * to keep (put back together, they would still fit under the target) are a gap: `refuse` and `retry`
 * refuse the digests (compaction-service.ts asks once more first with `retry`), `report` lets them
 * through; either way the record says what each section kept, and the pre-image keeps it all.
 */

/** The refusals this guard throws carry this in their data: the service knows to ask again with `retry`. */
export const RETENTION_GUARD = 'retention';

export function checkRetained(
  file: SplitFile,
  digested: ReadonlyArray<{ section: { path: string[]; text: string }; text: string }>,
  content: string,
  resultTokens: number,
  target: number,
  mode: RetentionMode,
): SectionRetention[] {
  const checked = checkDigested(
    digested.map(({ section, text }) => ({ filename: file.filename, path: section.path, before: section.text, after: text })),
    content,
  );
  const lost = checked.flatMap((c) => c.lost);
  if (lost.length === 0) return checked.map((c) => c.entry);
  const roomy = resultTokens + measureTokens(lost.map((item) => item.text).join(', ')) + 1 <= target;
  if (!roomy) return checked.map((c) => (c.lost.length > 0 ? { ...c.entry, to_meet_budget: true } : c.entry));
  if (mode === 'report') return checked.map((c) => c.entry);
  const lines = checked.filter((c) => c.lost.length > 0).map((c) => `the digest of ${c.entry.path.join(' > ')} drops ${describeMissing(c.entry)}`);
  throw invalid(
    `compaction of ${file.filename} refused by the retention guard: ${lines.join('; ')}, which the file has room to keep (${resultTokens} tokens, target ${target})`,
    { guard: RETENTION_GUARD },
  );
}

/** Said after digests the retention guard refused, with `retry`: what they dropped, fenced (it quotes the sections). */
export function retainedReminder(reason: string, nonce: string): ChatMessage {
  return {
    role: 'user',
    content: `Your digests were refused and nothing was written:\n${fenceReason(nonce, reason)}\nAnswer again with the whole JSON object: keep in each digest the facts its section held (numbers, dates, names, paths and identifiers, as written); shorten the wording instead.`,
  };
}
