import { hostname } from 'node:os';
import { invalid, LiveMemError } from '../../shared/errors.js';
import { listAll } from '../../storage/list.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { toStamp } from '../note/note-name.js';
import { requireSpace } from '../space/meta.js';
import { validateSpaceId } from '../validate.js';
import type { ConsolidateInput, ConsolidateOptions, ConsolidationResult, ConsolidationService, ProgressEvent } from './consolidation-service.js';

/**
 * Background consolidations. The job's state lives in the store (`_consolidation/jobs/{id}.json`),
 * so any process sharing the store can report on it; a job whose process died shows as
 * `interrupted` once its lease has expired (and the next consolidation finishes its commit).
 */
export interface JobRecord {
  job_id: string;
  space_id: string;
  state: 'running' | 'ok' | 'partial' | 'error' | 'interrupted';
  started_at: string;
  updated_at: string;
  runner: string;
  progress: ProgressEvent | null;
  result: ConsolidationResult | null;
}

const JOB_ID = /^\d{8}T\d{6}-[0-9a-z]{6}$/;
/** Progress is written at most this often (plus at every phase change and at the end). */
const PROGRESS_WRITE_MS = 1_000;
/** Job records kept per space. */
const KEEP_JOBS = 50;

export function createConsolidationJobs(context: CoreContext, service: ConsolidationService) {
  const { storage } = context;
  const save = (record: JobRecord) =>
    storage.put(spaceKeys(record.space_id).job(record.job_id), `${JSON.stringify(record, null, 2)}\n`, { contentType: 'application/json' });

  const jobKeys = async (spaceId: string): Promise<string[]> => {
    const keys: string[] = [];
    for await (const object of listAll(storage, spaceKeys(spaceId).jobs)) if (object.key.endsWith('.json')) keys.push(object.key);
    return keys.sort().reverse();
  };

  /** A running job whose lease expired long ago was cut short (its process died). */
  const withLiveness = async (record: JobRecord): Promise<JobRecord> => {
    if (record.state !== 'running') return record;
    const stale = context.clock().getTime() - Date.parse(record.updated_at) > context.consolidation.leaseTtlMs * 2;
    const lock = await storage.get(spaceKeys(record.space_id).lock);
    const lockExpired = !lock || Date.parse((JSON.parse(lock.body.toString('utf8')) as { expires_at?: string }).expires_at ?? '') < context.clock().getTime();
    return stale && lockExpired ? { ...record, state: 'interrupted' } : record;
  };

  return {
    /** Starts a consolidation in the background; answers at once with its job id (or `conflict`). */
    async start(caller: Caller, input: ConsolidateInput, options: ConsolidateOptions = {}) {
      const started = await service.begin(caller, input, options);
      const now = context.clock().toISOString();
      const record: JobRecord = {
        job_id: `${toStamp(context.clock())}-${context.randomId()}`,
        space_id: started.spaceId,
        state: 'running',
        started_at: now,
        updated_at: now,
        runner: `${caller.agent}@${hostname()}:${process.pid}`,
        progress: null,
        result: null,
      };
      try {
        await save(record);
      } catch (error) {
        await started.release();
        throw error;
      }
      let lastWrite = 0;
      let lastPhase = '';
      const onProgress = (event: ProgressEvent) => {
        options.onProgress?.(event);
        record.progress = event;
        const now = Date.now();
        if (event.phase === lastPhase && now - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = now;
        lastPhase = event.phase;
        record.updated_at = context.clock().toISOString();
        save(record).catch((error: unknown) => context.logger.warn('could not save job progress', { error: String(error) }));
      };
      void (async () => {
        try {
          record.result = await started.run(onProgress);
          record.state = record.result.status;
        } catch (error) {
          record.state = 'error';
          record.result = { status: 'error', message: error instanceof Error ? error.message : String(error) } as ConsolidationResult;
        } finally {
          await started.release();
          record.updated_at = context.clock().toISOString();
          await save(record).catch((error: unknown) => context.logger.error('could not save the job result', { error: String(error) }));
          await prune(record.space_id).catch(() => undefined);
        }
      })();
      return { status: 'ok' as const, space_id: record.space_id, job_id: record.job_id, state: record.state, started_at: record.started_at };
    },

    /** One job, or the newest jobs of a space. */
    async status(caller: Caller, input: { space_id: string; job_id?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      if (input.job_id) {
        if (!JOB_ID.test(input.job_id)) throw invalid(`invalid job_id ${JSON.stringify(input.job_id)}`);
        const object = await storage.get(spaceKeys(spaceId).job(input.job_id));
        if (!object) throw new LiveMemError('not_found', `no consolidation job '${input.job_id}' in space '${spaceId}'`, { space_id: spaceId, job_id: input.job_id });
        return { status: 'ok' as const, space_id: spaceId, jobs: [await withLiveness(JSON.parse(object.body.toString('utf8')) as JobRecord)] };
      }
      const keys = (await jobKeys(spaceId)).slice(0, 20);
      const records = await Promise.all(keys.map(async (key) => storage.get(key)));
      const jobs = await Promise.all(records.flatMap((o) => (o ? [JSON.parse(o.body.toString('utf8')) as JobRecord] : [])).map(withLiveness));
      return { status: 'ok' as const, space_id: spaceId, jobs };
    },
  };

  async function prune(spaceId: string): Promise<void> {
    const old = (await jobKeys(spaceId)).slice(KEEP_JOBS);
    if (old.length > 0) await storage.deleteMany(old);
  }
}

export type ConsolidationJobs = ReturnType<typeof createConsolidationJobs>;
