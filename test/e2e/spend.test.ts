/**
 * Spend end to end: the built binary as a CLI process, with the real `openai` client talking to a
 * scripted OpenAI-compatible server; a process killed with SIGKILL mid-run has recorded every call
 * it was answered.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { FIRST_PLAN, longSynthesisPlan } from '../../fixtures/llm/scenarios.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { summaryStep } from '../helpers/summaries.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');

async function seeded(notes: number, chars: number) {
  const home = await tempDir();
  const storage = createFsDriver(home.dir);
  const core = createCore({ storage });
  await core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < notes; i++)
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}: ${'the migration moves on. '.repeat(200)}`.slice(0, chars) });
  return { storage, env: { LIVE_MEM_HOME: home.dir }, cleanup: home.remove };
}

const llmEnv = (llm: ScriptedLlm) => ({ ...llm.env(), LIVE_MEM_LOG_LEVEL: 'warn' });

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

const totals = (usages: Array<{ prompt: number; completion: number }>) => ({
  prompt_tokens: usages.reduce((n, u) => n + u.prompt, 0),
  completion_tokens: usages.reduce((n, u) => n + u.completion, 0),
  tokens: usages.reduce((n, u) => n + u.prompt + u.completion, 0),
  calls: usages.length,
});

describe('spend (CLI)', () => {
  it('live-mem spend reports what the model reported, per purpose and per day; space info and the caps agree', async () => {
    const store = await seeded(5, 200);
    const llm = await startScriptedLlm([{ reply: longSynthesisPlan(700) }, { reply: 'A compact synthesis.' }, { reply: FIRST_PLAN }]);
    try {
      const env = { ...store.env, ...llmEnv(llm) };
      const run = await cli(env, ['consolidate', 'proj', '-q', '--json']);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(llm.usages.length, 2);

      const json = await cli(env, ['spend', 'proj', '--json']);
      assert.equal(json.exitCode, 0, json.stderr);
      const report = JSON.parse(json.stdout);
      assert.deepEqual(report.total.by_purpose, { consolidation: totals([llm.usages[0]!]), synthesis: totals([llm.usages[1]!]) });
      assert.equal(report.total.tokens, totals(llm.usages).tokens);
      assert.equal(report.days.length, 1);
      assert.equal(report.days[0].day, new Date().toISOString().slice(0, 10));

      const text = await cli(env, ['spend', 'proj', '--since', new Date(Date.now() - 3 * 86_400_000).toISOString()]);
      assert.equal(text.exitCode, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`^consolidation +1 +${llm.usages[0]!.prompt} +${llm.usages[0]!.completion} `, 'm'));
      assert.match(text.stdout, new RegExp(`^total +2 +.* ${totals(llm.usages).tokens}$`, 'm'));
      assert.match(text.stdout, /^daily cap: none$/m);

      const info = JSON.parse((await cli(env, ['space', 'info', 'proj', '--json'])).stdout);
      assert.equal(info.spend.today.tokens, totals(llm.usages).tokens);

      // A cap below what was spent: the next call is refused, exit 1, nothing sent; the space's own cap wins.
      for (let i = 0; i < 3; i++) await cli(env, ['note', 'proj', `more ${i}`]);
      const capped = await cli({ ...env, LIVE_MEM_LLM_DAILY_TOKENS: '100' }, ['consolidate', 'proj', '-q']);
      assert.equal(capped.exitCode, 1);
      assert.match(capped.stderr, /quota|LIVE_MEM_LLM_DAILY_TOKENS = 100/);
      assert.equal(llm.requests.length, 2, 'nothing was sent');
      const update = await cli(env, ['space', 'update', 'proj', '--llm-daily-tokens', '0', '--json']);
      assert.equal(JSON.parse(update.stdout).llm_daily_tokens, 0);
      const allowed = await cli({ ...env, LIVE_MEM_LLM_DAILY_TOKENS: '100' }, ['consolidate', 'proj', '-q', '--json']);
      assert.equal(JSON.parse(allowed.stdout).status, 'ok', allowed.stdout);

      const bad = await cli(env, ['spend', 'proj', '--since', 'yesterday']);
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /since/);
    } finally {
      await llm.close();
      await store.cleanup();
    }
  });

  it('a process killed (SIGKILL) mid-run has recorded every call it was answered', async () => {
    const store = await seeded(12, 3000);
    const llm = await startScriptedLlm([summaryStep()]);
    try {
      const args = ['summaries', 'update', 'proj', '--concurrency', '1', '--batch-delay-ms', '0', '-q', '--json'];
      const killed = await cli({ ...store.env, ...llmEnv(llm), LIVE_MEM_TEST_KILL_AT: 'summary-written-3' }, args);
      assert.equal(killed.signal, 'SIGKILL');
      assert.equal(llm.usages.length, 3);
      const records = await listKeys(store.storage, 'proj/_spend/');
      assert.equal(records.length, 3);
      const report = await createCore({ storage: store.storage }).spend.report(owner, { space_id: 'proj' });
      assert.deepEqual(report.total.by_purpose, { summaries: totals(llm.usages) });
    } finally {
      await llm.close();
      await store.cleanup();
    }
  });
});
