/**
 * Consolidation end to end: the built binary (its CLI as a process; the MCP server it serves, in this
 * process, and over stdio for sampling) with the real `openai` client talking to a scripted
 * OpenAI-compatible server on 127.0.0.1, on fs and on radosgw; processes killed with SIGKILL at each
 * point of the commit; two processes consolidating one space at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { FIRST_PLAN, scenarios } from '../../fixtures/llm/scenarios.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { requireS3OrSkip } from '../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../helpers/scripted-llm.js';
import { fsStore, rerunPastLease, s3Store, type Store } from '../helpers/stores.js';
import { historyNoteNames } from '../helpers/core.js';
import { listKeys } from '../../src/storage/list.js';

const owner = ownerCaller('tester');
const NOTES = 15;

async function seed(storage: StorageDriver, notes = NOTES): Promise<void> {
  const core = createCore({ storage });
  await core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < notes; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
}

const llmEnv = (llm: ScriptedLlm) => ({ ...llm.env(), LIVE_MEM_LOG_LEVEL: 'warn' });

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

/** Every note consolidated exactly once: counted once, in history once, gone from live/. */
async function assertExactlyOnce(storage: StorageDriver, notes = NOTES): Promise<void> {
  const info = await createCore({ storage }).spaces.info(owner, { space_id: 'proj' });
  assert.equal(info.total_notes_processed, notes);
  assert.equal(info.consolidation_count, 1);
  assert.equal(info.live.notes_count, 0);
  const history = await historyNoteNames(storage, 'proj');
  assert.equal(history.length, notes);
  assert.equal(new Set(history).size, notes);
  assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
  // The record keeps what the retention check found of each note (core/retention): FIRST_PLAN cites none, and keeps none of their numbers.
  const [record] = (await listKeys(storage, 'proj/history/')).filter((key) => key.endsWith('/record.json'));
  const retention = JSON.parse((await storage.get(record as string))?.body.toString() ?? '{}').retention as Array<{ note: string; status: string }>;
  assert.deepEqual(retention.map((entry) => entry.note).sort(), [...history].sort());
  assert.ok(
    retention.every((entry) => entry.status === 'not_retained'),
    JSON.stringify(retention),
  );
}

function consolidationSuite(label: string, makeStore: () => Promise<Store>): void {
  describe(`consolidation end to end on ${label}`, () => {
    let llm: ScriptedLlm;
    before(async () => {
      llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    });
    after(async () => llm?.close());

    it('live-mem consolidate: metrics on stdout, no progress display on a pipe, the bank written', async () => {
      const store = await makeStore();
      try {
        await seed(store.storage);
        const run = await cli({ ...store.env, ...llmEnv(llm) }, ['consolidate', 'proj', '--json']);
        assert.equal(run.exitCode, 0, run.stderr);
        const result = JSON.parse(run.stdout);
        assert.equal(result.status, 'ok');
        assert.equal(result.notes_processed, NOTES);
        assert.equal(result.bank_files_created, 6);
        assert.doesNotMatch(run.stderr, /window 1: asking/, 'progress is shown on a terminal only (test/e2e/progress.test.ts)');
        await assertExactlyOnce(store.storage);
        const bank = await cli({ ...store.env }, ['bank', 'list', 'proj', '--json']);
        assert.equal(JSON.parse(bank.stdout).file_count, 6);
      } finally {
        await store.remove();
      }
    });

    for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-meta', 'after-history', 'after-live-delete']) {
      it(`a process killed (SIGKILL) ${point} is finished by the next run, every note exactly once`, async () => {
        const store = await makeStore();
        const counting = await startScriptedLlm([{ reply: FIRST_PLAN }]);
        try {
          await seed(store.storage);
          const env = { ...store.env, ...llmEnv(counting), LIVE_MEM_CONSOLIDATION_LEASE_S: '2' };
          const killed = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: point }, ['consolidate', 'proj', '-q']);
          assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
          // The dead holder's lease is taken over at once (or, if its death cannot be told, once it expires); the next run finishes the work.
          const rerun = await rerunPastLease(store.storage, 'proj', () => cli(env, ['consolidate', 'proj', '-q', '--json']));
          assert.equal(rerun.exitCode, 0, rerun.stdout + rerun.stderr);
          const result = JSON.parse(rerun.stdout);
          assert.equal(result.recovered !== undefined, point !== 'before-commit');
          assert.equal(counting.requests.length, point === 'before-commit' ? 2 : 1, 'a committed plan is never asked for again');
          await assertExactlyOnce(store.storage);
        } finally {
          await counting.close();
          await store.remove();
        }
      });
    }

    it('two processes consolidating one space at once: exactly one runs, the other gets conflict', async () => {
      const store = await makeStore();
      // The model answers the lease holder only once the other process has ended: the two overlap, however slowly each starts.
      let oneEnded: () => void = () => undefined;
      const slow = await startScriptedLlm([{ until: new Promise<void>((resolve) => (oneEnded = resolve)), then: { reply: FIRST_PLAN } }]);
      try {
        await seed(store.storage);
        const env = { ...store.env, ...llmEnv(slow) };
        const started = [cli(env, ['consolidate', 'proj', '-q', '--json']), cli(env, ['consolidate', 'proj', '-q', '--json'])];
        void Promise.race(started).finally(oneEnded);
        const runs = await Promise.all(started);
        const statuses = runs.map((run) => JSON.parse(run.stdout).status).sort();
        assert.deepEqual(statuses, ['conflict', 'ok']);
        assert.deepEqual(runs.map((run) => run.exitCode).sort(), [0, 1]);
        assert.equal(slow.requests.length, 1);
        await assertExactlyOnce(store.storage);
      } finally {
        await slow.close();
        await store.remove();
      }
    });
  });
}

consolidationSuite('fs', fsStore);
const s3 = requireS3OrSkip('consolidation on S3');
if (s3) consolidationSuite('S3 (radosgw)', () => s3Store(s3));

describe('bank_consolidate over MCP', () => {
  it('reports progress, runs in the background, and another process reads the job', async () => {
    const store = await fsStore();
    const llm = await startScriptedLlm([{ delayMs: 300, then: { reply: FIRST_PLAN } }]);
    try {
      await seed(store.storage);
      const server = await inProcessServer({ ...store.env, ...llmEnv(llm) });
      try {
        const progress: Array<{ progress: number; total?: number; message?: string }> = [];
        const result = await server.client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } }, undefined, {
          onprogress: (p) => progress.push(p),
        });
        assert.equal((result.structuredContent as { status: string }).status, 'ok');
        assert.ok(progress.length >= 3, `${progress.length} progress notifications`);
        assert.equal(progress.at(-1)?.progress, NOTES);
        assert.equal(progress.at(-1)?.total, NOTES);

        await createCore({ storage: store.storage }).notes.write(owner, { space_id: 'proj', category: 'todo', content: 'one more' });
        const started = await server.call('bank_consolidate', { space_id: 'proj', background: true });
        assert.equal(started.state, 'running');
        const jobId = String(started.job_id);
        let job: Record<string, unknown> = {};
        for (let i = 0; i < 100 && job.state !== 'ok'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          job = ((await server.call('bank_consolidation_status', { space_id: 'proj', job_id: jobId })).jobs as Array<Record<string, unknown>>)[0]!;
        }
        assert.equal(job.state, 'ok');
        assert.equal((job.result as { notes_processed: number }).notes_processed, 1);
        const elsewhere = await cli(store.env, ['consolidate-status', 'proj', jobId, '--json']);
        assert.equal(JSON.parse(elsewhere.stdout).jobs[0].state, 'ok');
      } finally {
        await server.close();
      }
    } finally {
      await llm.close();
      await store.remove();
    }
  });

  it("uses the client's own model through MCP sampling when no endpoint is configured", async () => {
    const store = await fsStore();
    try {
      await seed(store.storage);
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
      const client = new Client({ name: 'sampling-client', version: '0' }, { capabilities: { sampling: {} } });
      const prompts: string[] = [];
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        const first = request.params.messages[0]?.content;
        prompts.push(first && 'text' in first ? String(first.text) : '');
        return { model: 'client-model', role: 'assistant', content: { type: 'text', text: FIRST_PLAN }, stopReason: 'endTurn' };
      });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [BIN], env: { PATH: process.env.PATH ?? '', ...store.env, LIVE_MEM_LOG_LEVEL: 'warn' } }),
      );
      try {
        const result = await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } });
        assert.equal((result.structuredContent as { status: string }).status, 'ok', JSON.stringify(result.structuredContent));
        assert.equal(prompts.length, 1);
        assert.match(prompts[0] ?? '', /LIVE NOTES TO FOLD IN \(15 notes/);
        await assertExactlyOnce(store.storage);
      } finally {
        await client.close();
      }
    } finally {
      await store.remove();
    }
  });

  it('without an endpoint or sampling: the agent gets a work package; the CLI says how to configure a model, or to use --prepare', async () => {
    const store = await fsStore();
    try {
      await seed(store.storage);
      const server = await inProcessServer(store.env);
      try {
        const result = await server.call('bank_consolidate', { space_id: 'proj' });
        assert.equal(result.status, 'ok');
        assert.match(String(result.handle), /^proj:/, 'the agent writes the plan itself (test/e2e/agent-consolidation.test.ts)');
      } finally {
        await server.close();
      }
      const run = await cli(store.env, ['consolidate', 'proj']);
      assert.equal(run.exitCode, 2);
      assert.match(run.stderr, /LIVE_MEM_LLM_BASE_URL/);
      assert.match(run.stderr, /--prepare/);
    } finally {
      await store.remove();
    }
  });

  it('a failed consolidation is an error status with isError, never ok', async () => {
    const store = await fsStore();
    const llm = await startScriptedLlm([...scenarios.invalidTwice] as Step[]);
    try {
      await seed(store.storage);
      const server = await inProcessServer({ ...store.env, ...llmEnv(llm) });
      try {
        const raw = await server.client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } });
        assert.equal(raw.isError, true);
        assert.equal((raw.structuredContent as { status: string }).status, 'error');
      } finally {
        await server.close();
      }
      const run = await cli({ ...store.env, ...llmEnv(llm) }, ['consolidate', 'proj', '-q']);
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /no usable plan twice/);
    } finally {
      await llm.close();
      await store.remove();
    }
  });
});
