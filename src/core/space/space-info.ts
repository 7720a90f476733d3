/**
 * A space described (`space_info`, and the head of `space_summary`): its meta, live notes, bank and
 * embeddings in one object. Its own module because two tools assemble from it, and summary passes the
 * bank it measured anyway so that the bank is read once.
 */
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { loadMeta } from '../space-meta.js';
import type { SpaceParts } from './space-ports.js';

/** A space described; `measuredBank` is given when the caller reads the bank anyway (space_summary). */
export async function describeSpace(context: CoreContext, parts: SpaceParts, spaceId: string, measuredBank?: ReturnType<SpaceParts['measureBank']>) {
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const { meta } = await loadMeta(context, spaceId);
  const [rules, synthesis, live, bank] = await Promise.all([
    storage.stat(keys.rules),
    storage.stat(keys.synthesis),
    parts.countLiveNotes(spaceId),
    measuredBank ?? parts.measureBank(spaceId),
  ]);
  const embeddings = parts.embeddings?.(spaceId);
  return {
    space_id: spaceId,
    description: meta.description,
    owner: meta.owner,
    created_at: meta.created_at,
    rules_size: rules?.size ?? 0,
    live,
    bank: {
      files_count: bank.files.length,
      total_size: bank.files.reduce((sum, file) => sum + file.size, 0),
      files: bank.files.map((file) => file.filename),
      total_tokens: bank.total_tokens,
      budget_tokens: bank.budget_tokens,
      over_budget: bank.over_budget,
      file_budgets: bank.files.map(({ filename, tokens, budget_tokens, over_budget }) => ({ filename, tokens, budget_tokens, over_budget })),
    },
    // Absent, not null, before the first one: tools/list declares a plain optional string (space_info's schema).
    ...(meta.last_consolidation !== null ? { last_consolidation: meta.last_consolidation } : {}),
    consolidation_count: meta.consolidation_count,
    total_notes_processed: meta.total_notes_processed,
    synthesis_exists: synthesis !== null,
    ...(embeddings ? { embeddings } : {}),
  };
}
