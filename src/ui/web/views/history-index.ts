import { callTool, type Result } from '../api.js';

export interface Consolidation {
  consolidation_id: string;
  /** Absent from older servers: a consolidation. */
  kind?: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  time_range?: { oldest?: string; newest?: string } | null;
  notes_count?: number;
  /** A compaction's: how many sections it rewrote (kept as they were). */
  preimages_count?: number;
  bank_files: BankWrite[];
  by?: string;
  model?: string;
  /** A revision's: what a person did (write, delete, rules, revert) and why. */
  action?: string;
  reason?: string | null;
}

/** A bank file a consolidation wrote: created or updated (a record may also list files it left unchanged). */
export interface BankWrite {
  filename: string;
  kind?: string;
}

/** The files a consolidation changed. */
export const changedFiles = (writes: unknown): string[] =>
  Array.isArray(writes) ? (writes as BankWrite[]).filter((write) => write.kind !== 'unchanged').map((write) => String(write.filename)) : [];

export type HistoryPage = Result & { consolidations: Consolidation[]; has_more: boolean; next_before?: string };

/**
 * For each bank file, the newest consolidation that wrote it, derived from history_list (each
 * record names the bank files it wrote): no extra tool, no second data path. Reads up to 1,000
 * consolidations, newest first, and stops once every file is placed.
 */
export async function lastWriters(spaceId: string, filenames: string[]): Promise<Map<string, Consolidation>> {
  const found = new Map<string, Consolidation>();
  let before = '';
  for (let page = 0; page < 10 && found.size < filenames.length; page++) {
    const result = await callTool<HistoryPage>('history_list', { space_id: spaceId, limit: 100, before });
    for (const record of result.consolidations) for (const file of changedFiles(record.bank_files)) if (!found.has(file)) found.set(file, record);
    if (!result.has_more || !result.next_before) break;
    before = result.next_before;
  }
  return found;
}
