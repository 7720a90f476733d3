import { hostname } from 'node:os';
import { invalid, LiveMemError } from '../shared/errors.js';
import { listAll } from '../storage/list.js';
import type { Caller } from './caller.js';
import type { CoreContext } from './context.js';
import { parseNoteName, toStamp } from './note-name.js';
import { isoSeconds } from '../shared/time.js';
import { forgottenSince } from './commit/history-record.js';

/**
 * Background work whose state lives in the store (`{folder}/{job id}.json`), so any process sharing
 * the store can follow it: consolidations and summaries runs. A job whose process died shows as
 * `interrupted` once its lease has expired (the next run finishes the work).
 */
export interface JobRecord<Progress, Result> {
  job_id: string;
  space_id: string;
  state: 'running' | 'ok' | 'partial' | 'error' | 'interrupted';
  started_at: string;
  updated_at: string;
  runner: string;
  progress: Progress | null;
  /** The work's result once it ended; a `JobFailure` when it threw instead of answering one. */
  result: Result | JobFailure | null;
  [field: string]: unknown;
}

/** How a job's work may end: its result's status becomes the job's state. */
export type JobOutcome = 'ok' | 'partial' | 'error';

/** What a job records when its work threw: no result of the work's own type exists, only the error. */
export interface JobFailure {
  status: 'error';
  message: string;
}

/** Work that holds its lease and is ready to run: what `begin` of a service returns. */
export interface StartedWork<Progress, Result> {
  spaceId: string;
  run(onProgress: (event: Progress) => void): Promise<Result>;
  release(): Promise<void>;
}

export interface JobKind {
  /** For messages: "consolidation", "summaries". */
  name: string;
  folder(spaceId: string): string;
  lease(spaceId: string): string;
}

export const JOB_ID = /^\d{8}T\d{6}-[0-9a-z]{6}$/;
/** Progress is written at most this often (plus at every phase change and at the end). */
const PROGRESS_WRITE_MS = 1_000;
/** Job records kept per space and kind. */
const KEEP_JOBS = 50;

export function createJobs<Progress extends { phase: string }, Result extends { status: JobOutcome }>(context: CoreContext, kind: JobKind) {
  const { storage } = context;
  const running = new Set<Promise<unknown>>();
  const keyOf = (spaceId: string, jobId: string) => `${kind.folder(spaceId)}${jobId}.json`;

  /** One job's saves, one after the other: a progress save still in flight must not land after the final state. */
  const saver = (record: JobRecord<Progress, Result>) => {
    let last: Promise<unknown> = Promise.resolve();
    return (): Promise<void> => {
      const body = `${JSON.stringify(record, null, 2)}\n`;
      const next = last.catch(() => undefined).then(() => storage.put(keyOf(record.space_id, record.job_id), body, { contentType: 'application/json' }));
      last = next;
      return next.then(() => undefined);
    };
  };

  const keys = async (spaceId: string): Promise<string[]> => {
    const found: string[] = [];
    for await (const object of listAll(storage, kind.folder(spaceId))) if (object.key.endsWith('.json')) found.push(object.key);
    return found.sort().reverse();
  };

  /** A running job whose record went quiet and whose lease expired was cut short (its process died). */
  const withLiveness = async (record: JobRecord<Progress, Result>): Promise<JobRecord<Progress, Result>> => {
    if (record.state !== 'running') return record;
    const now = context.clock().getTime();
    if (now - Date.parse(record.updated_at) <= context.consolidation.leaseTtlMs * 2) return record;
    const lock = await storage.get(kind.lease(record.space_id));
    let expiresAt = Number.NaN;
    try {
      expiresAt = lock ? Date.parse((JSON.parse(lock.body.toString('utf8')) as { expires_at?: string }).expires_at ?? '') : Number.NaN;
    } catch {
      // an unreadable lease blocks nobody
    }
    return !lock || !(expiresAt >= now) ? { ...record, state: 'interrupted' } : record;
  };

  /**
   * A forget committed while the job ran cleans the job records it finds (scrubJobs), but not one
   * this process saves after: its entry is written before it cleans, so a job that looks after its
   * last save finds every forget that could have missed it, and takes the text out itself.
   */
  const forgetSince = async (record: JobRecord<Progress, Result>): Promise<void> => {
    const gone = await forgottenSince(context, record.space_id, record.started_at);
    if (gone === null) return;
    const clean = withoutText(record, gone) as JobRecord<Progress, Result>;
    if (JSON.stringify(clean) === JSON.stringify(record)) return;
    Object.assign(record, clean);
    await saver(record)();
  };

  const parse = async (object: { key: string; body: Buffer }): Promise<JobRecord<Progress, Result> | null> => {
    try {
      return await withLiveness(JSON.parse(object.body.toString('utf8')) as JobRecord<Progress, Result>);
    } catch {
      context.logger.warn(`${kind.name} job ${object.key} is unreadable; skipped`);
      return null;
    }
  };

  return {
    /**
     * Runs started work in the background and answers at once with its job id. Its progress goes to
     * the job record (and to `onProgress`), its result too; the lease is released at the end.
     */
    async launch(caller: Caller, started: StartedWork<Progress, Result>, extra: Record<string, unknown> = {}, onProgressToo?: (event: Progress) => void) {
      const now = isoSeconds(context.clock());
      const record: JobRecord<Progress, Result> = {
        job_id: `${toStamp(context.clock())}-${context.randomId()}`,
        space_id: started.spaceId,
        state: 'running',
        ...extra,
        started_at: now,
        updated_at: now,
        runner: `${caller.agent}@${hostname()}:${process.pid}`,
        progress: null,
        result: null,
      };
      const save = saver(record);
      try {
        await save();
      } catch (error) {
        await started.release();
        throw error;
      }
      let lastWrite = 0;
      let lastPhase = '';
      const onProgress = (event: Progress) => {
        onProgressToo?.(event);
        record.progress = event;
        const time = context.monotonic();
        if (event.phase === lastPhase && time - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = time;
        lastPhase = event.phase;
        record.updated_at = isoSeconds(context.clock());
        save().catch((error: unknown) => context.logger.warn(`could not save ${kind.name} job progress`, { error: String(error) }));
      };
      const work = (async () => {
        try {
          const result = await started.run(onProgress);
          record.result = result;
          record.state = result.status;
        } catch (error) {
          record.state = 'error';
          record.result = { status: 'error', message: error instanceof Error ? error.message : String(error) };
        } finally {
          await started.release();
          record.updated_at = isoSeconds(context.clock());
          await save().catch((error: unknown) => context.logger.error(`could not save the ${kind.name} job result`, { error: String(error) }));
          await forgetSince(record).catch((error: unknown) => context.logger.error(`could not clean the ${kind.name} job record`, { error: String(error) }));
          const old = (await keys(record.space_id).catch(() => [])).slice(KEEP_JOBS);
          if (old.length > 0) await storage.deleteMany(old).catch(() => undefined);
        }
      })();
      running.add(work);
      void work.finally(() => running.delete(work));
      return { status: 'ok' as const, space_id: record.space_id, job_id: record.job_id, state: record.state, started_at: record.started_at };
    },

    /** One job; `not_found` when there is none by that id. */
    async read(spaceId: string, jobId: string): Promise<JobRecord<Progress, Result>> {
      if (!JOB_ID.test(jobId)) throw invalid(`invalid job_id ${JSON.stringify(jobId)}`);
      const object = await storage.get(keyOf(spaceId, jobId));
      const record = object ? await parse(object) : null;
      if (!record) throw new LiveMemError('not_found', `no ${kind.name} job '${jobId}' in space '${spaceId}'`, { space_id: spaceId, job_id: jobId });
      return record;
    },

    /** The newest `limit` jobs of a space; unreadable records are skipped. */
    async newest(spaceId: string, limit: number): Promise<Array<JobRecord<Progress, Result>>> {
      const objects = await Promise.all((await keys(spaceId)).slice(0, limit).map((key) => storage.get(key)));
      const records = await Promise.all(objects.map((object) => (object ? parse(object) : null)));
      return records.filter((record): record is JobRecord<Progress, Result> => record !== null);
    },

    /** Tracks other background work of this kind until it settles (see `idle`). */
    track(work: Promise<unknown>): void {
      running.add(work);
      void work.finally(() => running.delete(work));
    },

    /** Resolves when this process's background jobs are done (before the process exits). */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

export type Jobs<Progress extends { phase: string }, Result extends { status: JobOutcome }> = ReturnType<typeof createJobs<Progress, Result>>;

/** Strings of a job record that are no text: ids, states, times, names of what ran. */
const PLAIN_FIELDS = new Set([
  'job_id',
  'space_id',
  'state',
  'status',
  'phase',
  'started_at',
  'updated_at',
  'runner',
  'strategy',
  'consolidations',
  'recovered',
  'pending',
  'id',
  'action',
]);
/** What a forget leaves of a job record's words (messages, warnings, errors). */
export const TEXT_REMOVED = '(removed by a forget: it may have quoted a forgotten note)';

/**
 * What a forget takes out of a job record (consolidations and summaries alike): the text it may quote
 * of the forgotten notes. Applied by the forget as it rolls forward (forget/scrub-jobs.ts), and by a
 * job saved after a forget it could have missed (forgetSince, above).
 *
 * A job record without the text it may hold of notes: its messages, warnings and errors (a refused
 * plan's warning quotes the line it refused, a note's words) are replaced by TEXT_REMOVED; ids,
 * states, times, counts and the names of notes not in `gone` stay, those in `gone` go. Generic over
 * the record's shape (consolidation and summaries jobs alike, and fields added later): a string is
 * kept only when it is known to be no text. Applied twice, it changes nothing more.
 */
export function withoutText(value: unknown, gone: ReadonlySet<string>, field = ''): unknown {
  if (typeof value === 'string') {
    if (PLAIN_FIELDS.has(field) || value === TEXT_REMOVED) return value;
    return parseNoteName(value) !== null && !value.includes(' ') ? value : TEXT_REMOVED;
  }
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value) {
      if (typeof item === 'string' && gone.has(item)) continue;
      const clean = withoutText(item, gone, field);
      if (clean === TEXT_REMOVED && kept[kept.length - 1] === TEXT_REMOVED) continue;
      kept.push(clean);
    }
    return kept;
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutText(item, gone, key)]));
  }
  return value;
}
