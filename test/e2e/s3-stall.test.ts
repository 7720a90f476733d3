/**
 * A stalled S3 store: radosgw paused (SIGSTOP) accepts connections and answers nothing. Each write
 * must fail with a clear storage_error after LIVE_MEM_S3_TIMEOUT_MS, not wait on the SDK's retries,
 * and work again once the store answers. The pause is short (see helpers/radosgw-pause.ts).
 *
 * run-tests: alone — the pause stalls every other test file using this radosgw, so scripts/run-tests.mjs
 * runs this file after the others (in CI, the suites of three Node versions share one radosgw).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { isLiveMemError } from '../../src/shared/errors.js';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { BIN } from '../helpers/mcp-client.js';
import { radosgwPid, whilePaused } from '../helpers/radosgw-pause.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';

const config = requireS3OrSkip('a paused radosgw');

/** Runs `call` until it succeeds, at most five times: a store slow to answer before the test is not the test. */
async function warmUp(call: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await call();
      return;
    } catch (error) {
      if (attempt === 5 || !isLiveMemError(error, 'storage_error')) throw error;
    }
  }
}

if (config) {
  describe('a paused radosgw', () => {
    it('fails each write with "did not answer within" the timeout, then works again once it answers', async () => {
      const pid = await radosgwPid(config.endpoint);
      const h = await makeS3Harness({ timeoutMs: 1_000 });
      const driver = createS3Driver({ ...h.options, timeoutMs: 1_000 });
      try {
        // A connection and the conditional-write probe before the pause. After a whole suite, a loaded radosgw
        // may take longer than this driver's second for its first answer: warm up until it answers in time.
        await warmUp(() => driver.put('warm.md', 'a connection and the conditional-write probe, before the pause'));
        await driver.put('probe.json', '{}', { ifNoneMatch: '*' });
        const { result, capped } = await whilePaused(pid, () =>
          Promise.allSettled([driver.put('plain.md', 'x'), driver.put('created.json', '{}', { ifNoneMatch: '*' }), driver.get('warm.md')]),
        );
        assert.equal(result.status, 'fulfilled');
        const outcomes = (result as PromiseFulfilledResult<PromiseSettledResult<unknown>[]>).value;
        for (const outcome of outcomes) {
          assert.equal(outcome.status, 'rejected', 'the call waited for the store to come back');
          const error = (outcome as PromiseRejectedResult).reason;
          assert.ok(isLiveMemError(error, 'storage_error'), String(error));
          assert.match(error.message, /S3 did not answer within 1000 ms .*LIVE_MEM_S3_TIMEOUT_MS/);
        }
        assert.equal(capped, false, 'every call gave up before radosgw was continued');
        // Continued: the same driver writes and reads again. A key of its own: a write the client gave up on
        // sits in radosgw's socket and may still land once it runs again, after any later write to its key
        // (S3 has no cancel). live-mem never relies on that key's outcome: notes are create-only under new names.
        await driver.put('after.md', 'after');
        assert.equal((await driver.get('after.md'))?.body.toString(), 'after');
        const late = (await driver.get('plain.md'))?.body.toString();
        assert.ok(late === undefined || late === 'x', `the abandoned write lands whole or not at all: ${late}`);
      } finally {
        await driver.close();
        await h.cleanup();
      }
    });

    it('applies LIVE_MEM_S3_TIMEOUT_MS to a note written by the CLI', async () => {
      const pid = await radosgwPid(config.endpoint);
      const h = await makeS3Harness();
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...s3ProcessEnv(config, h.prefix), LIVE_MEM_S3_TIMEOUT_MS: '1000' };
      const cli = (...args: string[]) => execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false });
      try {
        assert.equal((await cli('space', 'create', 'alpha')).exitCode, 0);
        const { result } = await whilePaused(pid, () => cli('note', 'alpha', 'written', 'while', 'the', 'store', 'is', 'paused'));
        assert.equal(result.status, 'fulfilled');
        const run = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof cli>>>).value;
        assert.equal(run.exitCode, 1, `${run.stdout}\n${run.stderr}`);
        assert.match(run.stderr, /S3 did not answer within 1000 ms/);
        const after = await cli('note', 'alpha', 'written', 'once', 'it', 'answers');
        assert.equal(after.exitCode, 0, after.stderr);
      } finally {
        await h.cleanup();
      }
    });
  });
}
