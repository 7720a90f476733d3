/**
 * Summaries test helpers: a scripted model that answers summary prompts with JSON computed from
 * what it was sent, and checks on the stored summaries.
 */
import assert from 'node:assert/strict';
import { readFences } from '../../src/core/prompt-fence.js';
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import type { Step } from './scripted-llm.js';

/** The summary JSON for a prompt: says how many notes/summaries it got, padded to `chars`. */
export function summaryReply(messages: Array<{ role: string; content: string }>, chars = 300): string {
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  const notes = readFences(user, 'note').length;
  const children = readFences(user, 'summary').length;
  const head = notes > 0 ? `Summary of ${notes} notes.` : `Overview of ${children} summaries.`;
  return JSON.stringify({
    summary: `${head} ${'The team worked on the export. '.repeat(Math.ceil(chars / 31))}`.slice(0, chars),
    key_findings: ['the export works'],
    topics: ['export'],
    agents: ['model-said'],
    files_mentioned: ['src/export.ts'],
  });
}

/** A step answering every summary prompt. */
export const summaryStep = (chars = 300): Step => ({ dynamic: (messages) => summaryReply(messages, chars) });

export interface StoredSummary {
  id: string;
  level: number;
  sealed: boolean;
  covers: string[];
  hash: string;
  summary: string;
  created_at: string;
}

/** Every stored summary of a space, by level. */
export async function storedSummaries(storage: StorageDriver, spaceId: string): Promise<StoredSummary[]> {
  const keys = (await listKeys(storage, `${spaceId}/_summaries/`)).filter((key) => /\/L\d\/[^/]+\.json$/.test(key));
  const records: StoredSummary[] = [];
  for (const key of keys) records.push(JSON.parse((await storage.get(key))!.body.toString('utf8')) as StoredSummary);
  return records.sort((a, b) => a.level - b.level || (a.id < b.id ? -1 : 1));
}

/**
 * The invariants of a store's summaries: each note covered exactly once by level 1 (slices of one
 * note count as that note), each summary of level k covered exactly once by level k+1 when that
 * level exists, ids unique.
 */
export async function assertCoverage(storage: StorageDriver, spaceId: string, noteNames: string[]): Promise<StoredSummary[]> {
  const all = await storedSummaries(storage, spaceId);
  assert.equal(new Set(all.map((s) => s.id)).size, all.length, 'no duplicate id');
  const covered = all.filter((s) => s.level === 1).flatMap((s) => s.covers);
  assert.equal(new Set(covered).size, covered.length, 'no note covered twice');
  assert.deepEqual([...new Set(covered.map((ref) => ref.replace(/#\d+\/\d+$/, '')))].sort(), [...noteNames].sort(), 'every note covered');
  for (let level = 2; level <= 6; level++) {
    const parents = all.filter((s) => s.level === level);
    if (parents.length === 0) break;
    const children = all
      .filter((s) => s.level === level - 1)
      .map((s) => s.id)
      .sort();
    const members = parents.flatMap((s) => s.covers);
    assert.deepEqual([...members].sort(), children, `level ${level} covers level ${level - 1} exactly once`);
  }
  return all;
}
