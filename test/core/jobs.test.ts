import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createContext } from '../../src/core/core.js';
import { createJobs, type JobFailure } from '../../src/core/jobs.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';

type Result = { status: 'ok' | 'partial' | 'error'; written: number };

/** Background job records (core/jobs.ts): the work's result, or the error it threw, typed as what it is. */
describe('background jobs', () => {
  const setup = () => {
    const context = createContext({ storage: createMemoryDriver() });
    const jobs = createJobs<{ phase: string }, Result>(context, { name: 'test', folder: (id) => `${id}/_jobs/`, lease: (id) => `${id}/lock.json` });
    return { jobs };
  };

  it('records the result the work answered, and its status as the job’s state', async () => {
    const { jobs } = setup();
    let released = 0;
    const started = await jobs.launch(owner, { spaceId: 's', run: async () => ({ status: 'partial', written: 3 }), release: async () => void released++ });
    await jobs.idle();
    const record = await jobs.read('s', started.job_id);
    assert.equal(record.state, 'partial');
    assert.deepEqual(record.result, { status: 'partial', written: 3 });
    assert.equal(released, 1);
  });

  it('records a failure, not a result, when the work throws — and releases its lease', async () => {
    const { jobs } = setup();
    let released = 0;
    const started = await jobs.launch(owner, {
      spaceId: 's',
      run: async () => {
        throw new Error('the model went away');
      },
      release: async () => void released++,
    });
    await jobs.idle();
    const record = await jobs.read('s', started.job_id);
    assert.equal(record.state, 'error');
    const failure: JobFailure = { status: 'error', message: 'the model went away' };
    assert.deepEqual(record.result, failure);
    assert.ok(record.result && !('written' in record.result), 'no field of a result the work never answered');
    assert.equal(released, 1);
  });
});
