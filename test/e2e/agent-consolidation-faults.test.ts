/**
 * An agent-written consolidation killed (SIGKILL) between its steps and at each point of its commit, on
 * fs and on S3 (radosgw): the package is asked for in one process and the plan submitted in another
 * (the steps never share a process), the submitting process killed; the next process finishes the
 * commit or commits the plan, and every note is consolidated exactly once, each fact in the bank once.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { BIN } from '../helpers/mcp-client.js';
import { historyNoteNames } from '../helpers/core.js';
import { writePlan } from '../helpers/plan-writer.js';
import { requireS3OrSkip } from '../helpers/s3.js';
import { fsStore, rerunPastLease, s3Store, type Store } from '../helpers/stores.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('checker');
const FACTS = ['The API listens on port 8443.', 'Release 3.2.1 ships on 2026-03-14.', 'The cache lives in /var/cache/demo-app.'];

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', LIVE_MEM_LOG_LEVEL: 'warn', LIVE_MEM_AGENT: 'dave', ...env },
    extendEnv: false,
    reject: false,
  });

function killSuite(label: string, makeStore: () => Promise<Store>): void {
  describe(`an agent's plan killed (SIGKILL) mid-commit, on ${label}`, () => {
    for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-meta', 'after-history', 'after-live-delete']) {
      it(`killed ${point}: the next process finishes it; every note once, every fact once`, async () => {
        const store = await makeStore();
        const dir = await tempDir();
        try {
          const env = { ...store.env, LIVE_MEM_CONSOLIDATION_LEASE_S: '2' };
          for (const fact of FACTS) assert.equal((await cli(env, ['note', 'proj', fact])).exitCode, 0);
          const asked = await cli(env, ['consolidate', 'proj', '--prepare', '--json']);
          assert.equal(asked.exitCode, 0, asked.stderr);
          const pkg = JSON.parse(asked.stdout) as { handle: string; prompt: string };
          const file = path.join(dir.dir, 'plan.json');
          await writeFile(file, writePlan(pkg));
          const submit = ['consolidate', 'proj', '--plan', file, '--handle', pkg.handle, '--json'];
          const killed = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: point }, submit);
          assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
          // Again while the dead holder's lease blocks (rerunPastLease waits for its expiry); any other answer is final.
          const again = await rerunPastLease(store.storage, 'proj', async () => {
            const run = await cli(env, submit);
            return /is busy/.test(run.stdout) ? run : { ...run, exitCode: run.exitCode === 1 ? 3 : run.exitCode };
          });
          const answer = JSON.parse(again.stdout) as { status: string; code?: string; message?: string; recovered?: string };
          if (point === 'before-commit') assert.equal(answer.status, 'ok', again.stdout);
          else {
            assert.equal(answer.code, 'conflict', again.stdout);
            assert.match(answer.message ?? '', /already consolidated/);
          }
          const info = await createCore({ storage: store.storage }).spaces.info(owner, { space_id: 'proj' });
          assert.equal(info.consolidation_count, 1);
          assert.equal(info.total_notes_processed, FACTS.length);
          assert.equal(info.live.notes_count, 0);
          const history = await historyNoteNames(store.storage, 'proj');
          assert.equal(new Set(history).size, FACTS.length);
          assert.equal(history.length, FACTS.length);
          assert.equal(await store.storage.get('proj/_consolidation/pending.json'), null);
          assert.equal(await store.storage.get('proj/_consolidation/claim.json'), null, 'the claim is gone');
          const bank = (await store.storage.get('proj/bank/activeContext.md'))?.body.toString() ?? '';
          for (const fact of FACTS) assert.equal(bank.split(fact).length - 1, 1, `${fact} once: ${bank}`);
        } finally {
          await dir.remove();
          await store.remove();
        }
      });
    }
  });
}

killSuite('fs', fsStore);
const s3 = requireS3OrSkip('agent consolidation on S3');
if (s3) killSuite('S3 (radosgw)', () => s3Store(s3));
