import { listAll } from '../../../storage/list.js';
import type { CoreContext } from '../../context.js';
import { spaceKeys } from '../../layout.js';
import type { SummariesProgress, SummariesResult } from './runner.js';

/**
 * A background summaries run, as stored at `{space}/_summaries/jobs/{id}.json`, so any process
 * sharing the store can report on it. A running job whose process died shows as `interrupted` once
 * the summaries lease has expired; the next run picks up where it stopped (the plan is recomputed).
 */
export interface SummaryJobRecord {
  job_id: string;
  space_id: string;
  state: 'running' | 'ok' | 'partial' | 'error' | 'interrupted';
  /** `manual` (summaries_update with background) or `auto` (after a consolidation). */
  trigger: 'manual' | 'auto';
  started_at: string;
  updated_at: string;
  runner: string;
  progress: SummariesProgress | null;
  result: SummariesResult | null;
}

export const JOB_ID = /^\d{8}T\d{6}-[0-9a-z]{6}$/;

/** Job record keys of a space, newest first. */
export async function jobKeys(context: CoreContext, spaceId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of listAll(context.storage, spaceKeys(spaceId).summaryJobs)) if (object.key.endsWith('.json')) keys.push(object.key);
  return keys.sort().reverse();
}

/** A running job whose lease expired long ago was cut short (its process died). */
export async function withLiveness(context: CoreContext, record: SummaryJobRecord): Promise<SummaryJobRecord> {
  if (record.state !== 'running') return record;
  const now = context.clock().getTime();
  const stale = now - Date.parse(record.updated_at) > context.consolidation.leaseTtlMs * 2;
  if (!stale) return record;
  const lock = await context.storage.get(spaceKeys(record.space_id).summariesLock);
  let expiresAt = Number.NaN;
  try {
    expiresAt = lock ? Date.parse((JSON.parse(lock.body.toString('utf8')) as { expires_at?: string }).expires_at ?? '') : Number.NaN;
  } catch {
    // an unreadable lease blocks nobody
  }
  return !lock || !(expiresAt >= now) ? { ...record, state: 'interrupted' } : record;
}

/** The newest `limit` jobs of a space; unreadable records are skipped. */
export async function readJobs(context: CoreContext, spaceId: string, limit: number): Promise<SummaryJobRecord[]> {
  const keys = (await jobKeys(context, spaceId)).slice(0, limit);
  const objects = await Promise.all(keys.map((key) => context.storage.get(key)));
  const records: SummaryJobRecord[] = [];
  for (const object of objects) {
    if (!object) continue;
    try {
      records.push(await withLiveness(context, JSON.parse(object.body.toString('utf8')) as SummaryJobRecord));
    } catch {
      context.logger.warn(`summaries job ${object.key} is unreadable; skipped`);
    }
  }
  return records;
}
