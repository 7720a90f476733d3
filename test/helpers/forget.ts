/**
 * Forget test helpers: a scripted model for a space with consolidated notes and summaries that quote
 * them, and a scan of the store for a word (what a forget must leave nowhere but in backups).
 */
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import type { Step } from './scripted-llm.js';
import { summaryReply } from './summaries.js';

/** The word the notes to forget hold. */
export const WORD = 'zebracorn';
/** Small summaries: windows of two notes of 500 characters. */
export const SMALL_SUMMARIES = { window_chars: 1000, min_flush_chars: 500, group_chars: 1000, batch_delay_ms: 0, concurrency: 1 };

/** Consolidation plans get FIRST_PLAN; summary prompts a summary quoting the notes' key words (so a summary holds them). */
export const forgetModelStep: Step = {
  dynamic: (messages) => {
    const user = messages.find((m) => m.role === 'user')?.content ?? '';
    if (!(messages.find((m) => m.role === 'system')?.content ?? '').startsWith('You summarise')) {
      // The standard plan, each file citing both notes of the window: provenance a forget must clean.
      const plan = JSON.parse(FIRST_PLAN) as { files: Array<Record<string, unknown>> };
      return JSON.stringify({ ...plan, files: plan.files.map((file) => ({ ...file, sources: [1, 2] })) });
    }
    const reply = JSON.parse(summaryReply(messages)) as { summary: string };
    const quoted = [...user.matchAll(/\b(zebracorn|giraffe)\b/g)].map((m) => m[0]).join(' ');
    return JSON.stringify({ ...reply, summary: `${reply.summary} ${quoted}` });
  },
};

/** Every object of the store under `prefix` (backups aside) whose bytes hold `word`. */
export async function keysHolding(storage: StorageDriver, word: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const key of await listKeys(storage, prefix)) {
    if (key.startsWith('_backups/') || key.includes('/_backups/')) continue;
    if ((await storage.get(key))?.body.includes(word)) found.push(key);
  }
  return found;
}
