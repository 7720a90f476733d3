/**
 * Summaries end to end: the built binary (its CLI as a process, the MCP server it serves in this
 * process) with the real `openai` client talking to a scripted OpenAI-compatible server on 127.0.0.1;
 * processes killed with SIGKILL after some summaries are written, then run again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { assertCoverage, storedSummaries, summaryReply, summaryStep } from '../helpers/summaries.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
/** 12 notes of 3000 characters: six sealed windows of two notes with the default sizes, then one level-2 group. */
const NOTES = 12;

interface Store {
  env: Record<string, string>;
  storage: StorageDriver;
  names: string[];
  cleanup(): Promise<void>;
}

async function seededStore(): Promise<Store> {
  const home = await tempDir();
  const storage = createFsDriver(home.dir);
  const core = createCore({ storage });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  for (let i = 0; i < NOTES; i++) {
    const content = `Étape ${i} : la migration de la base avance. ${'Détails du travail. '.repeat(150)}`.slice(0, 3000);
    names.push((await core.notes.write(owner, { space_id: 'proj', category: 'progress', content })).filename);
  }
  return { env: { LIVE_MEM_HOME: home.dir }, storage, names, cleanup: home.remove };
}

const llmEnv = (llm: ScriptedLlm) => ({ ...llm.env(), LIVE_MEM_LOG_LEVEL: 'warn', LIVE_MEM_CONSOLIDATION_LEASE_S: '2' });

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

/** Runs again until the dead holder's lease is taken over (at once on Linux; after its expiry elsewhere). */
async function rerun(env: Record<string, string>, args: string[]) {
  let run = await cli(env, args);
  if (run.exitCode === 1 && JSON.parse(run.stdout).status === 'conflict') {
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    run = await cli(env, args);
  }
  return run;
}

describe('summaries end to end', () => {
  let llm: ScriptedLlm;
  before(async () => {
    llm = await startScriptedLlm([summaryStep()]);
  });
  after(async () => llm?.close());

  it('live-mem summaries update / list / show: results on stdout, no progress display on a pipe', async () => {
    const store = await seededStore();
    try {
      const run = await cli({ ...store.env, ...llmEnv(llm) }, ['summaries', 'update', 'proj', '--batch-delay-ms', '0', '--json']);
      assert.equal(run.exitCode, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.status, 'ok');
      assert.equal(result.written, 7);
      assert.deepEqual(
        result.levels.map((l: { created: number }) => l.created),
        [6, 1],
      );
      assert.doesNotMatch(run.stderr, /summarising/, 'progress is shown on a terminal only (test/e2e/progress.test.ts)');
      await assertCoverage(store.storage, 'proj', store.names);

      const list = await cli(store.env, ['summaries', 'list', 'proj', '--level', '1']);
      assert.equal(list.exitCode, 0, list.stderr);
      assert.match(list.stdout, /^id\s+level\s+sealed/);
      assert.equal(list.stdout.trim().split('\n').length, 7);
      const id = list.stdout.trim().split('\n')[1]!.split(/\s+/)[0]!;
      const show = await cli(store.env, ['summaries', 'show', 'proj', id, '--json']);
      assert.equal(JSON.parse(show.stdout).summary.id, id);
      assert.equal(JSON.parse(show.stdout).notes.length, 2);
      const text = await cli(store.env, ['summaries', 'show', 'proj', id]);
      assert.match(text.stdout, /Summary of 2 notes/);

      const dry = await cli({ ...store.env, ...llmEnv(llm) }, ['summaries', 'update', 'proj', '--full', '--window-chars', '12000', '--dry-run', '--json']);
      assert.equal(dry.exitCode, 0, dry.stderr);
      assert.deepEqual(JSON.parse(dry.stdout).levels[0].created, 3);
      const bad = await cli(store.env, ['summaries', 'update', 'proj', '--level', '9']);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /level must be an integer from 1 to 6/);
    } finally {
      await store.cleanup();
    }
  });

  it('a process killed (SIGKILL) after 3 summaries: the next run writes the rest, each note covered exactly once', async () => {
    const store = await seededStore();
    const counting = await startScriptedLlm([summaryStep()]);
    try {
      const env = { ...store.env, ...llmEnv(counting) };
      const args = ['summaries', 'update', 'proj', '--concurrency', '1', '--batch-delay-ms', '0', '-q', '--json'];
      const killed = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: 'summary-written-3' }, args);
      assert.equal(killed.signal, 'SIGKILL');
      assert.equal((await storedSummaries(store.storage, 'proj')).length, 3);
      const calls = counting.requests.length;
      const again = await rerun(env, args);
      assert.equal(again.exitCode, 0, again.stderr);
      const result = JSON.parse(again.stdout);
      assert.equal(result.status, 'ok');
      assert.deepEqual([result.levels[0].unchanged, result.levels[0].created], [3, 3]);
      assert.equal(result.written, 4);
      assert.equal(counting.requests.length - calls, 4, 'a written summary is never asked for again');
      const all = await assertCoverage(store.storage, 'proj', store.names);
      assert.deepEqual(
        all.map((s) => s.level),
        [1, 1, 1, 1, 1, 1, 2],
      );
      assert.equal(await store.storage.get('proj/_summaries/lock.json'), null);
    } finally {
      await counting.close();
      await store.cleanup();
    }
  });

  it('a full rebuild killed half-way: an incremental run keeps the older summaries, a full one finishes the rebuild', async () => {
    const store = await seededStore();
    try {
      const env = { ...store.env, ...llmEnv(llm) };
      const base = ['summaries', 'update', 'proj', '--concurrency', '1', '--batch-delay-ms', '0', '-q', '--json'];
      assert.equal((await cli(env, base)).exitCode, 0);
      const old = (await storedSummaries(store.storage, 'proj')).map((s) => s.id);
      const full = [...base, '--full', '--window-chars', '12000'];
      const killed = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: 'summary-written-2' }, full);
      assert.equal(killed.signal, 'SIGKILL');
      assert.equal((await storedSummaries(store.storage, 'proj')).length, old.length + 2, 'old ones kept until the new level is complete');

      // Resumed as a full rebuild: the two written are reused, the rest written, the old deleted.
      const resumed = await rerun(env, full);
      assert.equal(resumed.exitCode, 0, resumed.stderr);
      const result = JSON.parse(resumed.stdout);
      assert.deepEqual([result.levels[0].unchanged, result.levels[0].created, result.levels[0].deleted], [2, 1, 6]);
      const all = await assertCoverage(store.storage, 'proj', store.names);
      assert.deepEqual(
        all.filter((s) => s.level === 1).map((s) => s.covers.length),
        [4, 4, 4],
      );

      // Killed again, then an incremental run: overlapping sealed summaries, the older kept.
      const killedAgain = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: 'summary-written-1' }, base.concat('--full'));
      assert.equal(killedAgain.signal, 'SIGKILL');
      const incremental = await rerun(env, base);
      assert.equal(incremental.exitCode, 0, incremental.stderr);
      assert.equal(JSON.parse(incremental.stdout).levels[0].deleted, 1);
      const after = await assertCoverage(store.storage, 'proj', store.names);
      assert.deepEqual(
        after.filter((s) => s.level === 1).map((s) => s.covers.length),
        [4, 4, 4],
      );
    } finally {
      await store.cleanup();
    }
  });

  for (const mode of ['auto', 'off']) {
    it(`live-mem consolidate with LIVE_MEM_SUMMARIES=${mode}: ${mode === 'auto' ? 'the summaries follow before the process exits' : 'no summaries'}`, async () => {
      const store = await seededStore();
      const both = await startScriptedLlm([{ dynamic: (messages) => (messages[0]!.content.includes('memory bank') ? FIRST_PLAN : summaryReply(messages)) }]);
      try {
        const run = await cli({ ...store.env, ...llmEnv(both), LIVE_MEM_SUMMARIES: mode }, ['consolidate', 'proj', '-q', '--json']);
        assert.equal(run.exitCode, 0, run.stderr);
        assert.equal(JSON.parse(run.stdout).notes_processed, NOTES);
        const summaries = await storedSummaries(store.storage, 'proj');
        if (mode === 'off') {
          assert.deepEqual(summaries, []);
          assert.equal(both.requests.length, 1);
          return;
        }
        await assertCoverage(store.storage, 'proj', store.names);
        assert.equal(summaries.length, 7);
        const status = await cli(store.env, ['summaries', 'status', 'proj', '--json']);
        const [job] = JSON.parse(status.stdout).jobs;
        assert.deepEqual([job.trigger, job.state], ['auto', 'ok']);
      } finally {
        await both.close();
        await store.cleanup();
      }
    });
  }

  it('over MCP: summaries_update in the background, followed with summaries_list; summaries_read', async () => {
    const store = await seededStore();
    try {
      const server = await inProcessServer({ ...store.env, ...llmEnv(llm) });
      try {
        const tools = await server.client.listTools();
        const names = tools.tools.map((t) => t.name);
        for (const name of ['summaries_update', 'summaries_list', 'summaries_read']) assert.ok(names.includes(name), name);
        const started = await server.call('summaries_update', { space_id: 'proj', background: true, batch_delay_ms: 0 });
        assert.equal(started.state, 'running');
        let listed: Record<string, unknown> = {};
        for (let i = 0; i < 100 && (listed.last_job as { state?: string } | undefined)?.state !== 'ok'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          listed = await server.call('summaries_list', { space_id: 'proj' });
        }
        assert.equal((listed.last_job as { state: string }).state, 'ok');
        assert.equal(listed.total, 7);
        const first = (listed.summaries as Array<{ id: string }>)[0]!;
        const read = await server.call('summaries_read', { space_id: 'proj', summary_id: first.id });
        assert.equal((read.summary as { id: string }).id, first.id);
        const missing = await server.call('summaries_read', { space_id: 'proj', summary_id: 'L1-20200101T000000-zz' });
        assert.equal(missing.status, 'not_found');
        const progress: number[] = [];
        const wider = await server.client.callTool(
          { name: 'summaries_update', arguments: { space_id: 'proj', strategy: 'full', window_chars: 12000, batch_delay_ms: 0 } },
          undefined,
          { onprogress: (p) => progress.push(p.progress) },
        );
        const result = wider.structuredContent as { status: string; written: number; levels: Array<{ deleted: number }> };
        assert.equal(result.status, 'ok', JSON.stringify(result));
        assert.equal(result.levels[0]!.deleted, 6);
        assert.ok(progress.length >= 2 && progress.every((p, i) => i === 0 || p >= progress[i - 1]!), `progress only grows: ${progress.join(',')}`);
        const dry = await server.call('summaries_update', { space_id: 'proj', dry_run: true });
        assert.equal(dry.status, 'ok');
        assert.equal(dry.written, 0);
      } finally {
        await server.close();
      }
    } finally {
      await store.cleanup();
    }
  });
});
