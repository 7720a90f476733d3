/**
 * Spend end to end: the built binary as a CLI process and as an HTTP server, with the real `openai`
 * client talking to a scripted OpenAI-compatible server; a process killed with SIGKILL mid-run has
 * recorded every call it was answered; a writer token cannot lift the operator's cap; calls at once
 * never pass a cap together.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { FIRST_PLAN, longSynthesisPlan } from '../../fixtures/llm/scenarios.js';
import { BIN, startHttpServer } from '../helpers/mcp-client.js';
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

describe('spend caps: who may lift them, and calls at once', () => {
  const connect = async (url: string, token: string): Promise<Client> => {
    const client = new Client({ name: 'spend-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string; message?: string };

  it("over HTTP, a writer token can only lower the operator's cap (0 and more refused, saying why); an admin token may lift it", async () => {
    const store = await seeded(5, 200);
    const core = createCore({ storage: store.storage });
    const writer = (await core.auth.create(owner, { name: 'writer', permissions: 'read,write', space_ids: 'proj' })).token;
    const admin = (await core.auth.create(owner, { name: 'lead', permissions: 'read,write,admin', space_ids: 'proj' })).token;
    const llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    const server = await startHttpServer({ ...store.env, ...llm.env(), LIVE_MEM_LLM_MAX_TOKENS: '1000', LIVE_MEM_LLM_DAILY_TOKENS: '100' });
    const agent = await connect(server.url, writer);
    const lead = await connect(server.url, admin);
    try {
      const meta = async () => (await store.storage.get('proj/_meta.json'))?.body.toString();
      const before = await meta();
      for (const tokens of [0, 50_000]) {
        const refused = await call(agent, 'space_update', { space_id: 'proj', llm_daily_tokens: tokens });
        assert.equal(refused.status, 'forbidden', JSON.stringify(refused));
        assert.match(String(refused.message), /a writer may only lower a space's daily cap, and LIVE_MEM_LLM_DAILY_TOKENS = 100 is in force/);
        assert.match(String(refused.message), /give a value from 1 to 100, or ask an admin/);
      }
      assert.equal(await meta(), before, 'nothing was changed');
      const capped = await call(agent, 'bank_consolidate', { space_id: 'proj' });
      assert.equal(capped.status, 'error');
      assert.match(String(capped.message), /quota|LIVE_MEM_LLM_DAILY_TOKENS = 100/);
      assert.equal(llm.requests.length, 0, 'nothing was sent');

      const lowered = await call(agent, 'space_update', { space_id: 'proj', llm_daily_tokens: 60 });
      assert.equal(lowered.status, 'ok', JSON.stringify(lowered));
      assert.deepEqual((lowered.daily_cap as Record<string, unknown>).tokens, 60);
      const info = (await call(agent, 'space_info', { space_id: 'proj' })).spend as Record<string, Record<string, unknown>>;
      assert.equal(info.daily_cap?.tokens, 60);
      assert.match(String(info.daily_cap?.why), /llm_daily_tokens = 60 a writer set for space 'proj', below LIVE_MEM_LLM_DAILY_TOKENS = 100/);

      const lifted = await call(lead, 'space_update', { space_id: 'proj', llm_daily_tokens: 0 });
      assert.equal(lifted.status, 'ok', JSON.stringify(lifted));
      assert.match(String((lifted.daily_cap as Record<string, unknown>).why), /no cap: an admin lifted LIVE_MEM_LLM_DAILY_TOKENS = 100 for space 'proj'/);
      const consolidated = await call(agent, 'bank_consolidate', { space_id: 'proj' });
      assert.equal(consolidated.status, 'ok', JSON.stringify(consolidated));
      assert.equal(llm.requests.length, 1);

      // Under the admin's cap, a writer may lower it again, not raise it past it.
      assert.equal((await call(lead, 'space_update', { space_id: 'proj', llm_daily_tokens: 200_000 })).status, 'ok');
      assert.equal((await call(agent, 'space_update', { space_id: 'proj', llm_daily_tokens: 300_000 })).status, 'forbidden');
      const text = await cli(store.env, ['spend', 'proj']);
      assert.match(
        text.stdout,
        /^daily cap: 200000 tokens: the daily cap llm_daily_tokens = 200000 an admin set for space 'proj' in place of LIVE_MEM_LLM_DAILY_TOKENS = 0/m,
      );
    } finally {
      await agent.close();
      await lead.close();
      await server.stop();
      await llm.close();
      await store.cleanup();
    }
  });

  it('a summaries run of 16 calls at once never passes the cap: each call is claimed before it is sent', async () => {
    const home = await tempDir();
    const storage = createFsDriver(home.dir);
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 32; i++)
      await core.notes.write(owner, {
        space_id: 'proj',
        category: 'progress',
        content: `Step ${i}: ${'the migration moves on. '.repeat(500)}`.slice(0, 10_000),
      });
    const llm = await startScriptedLlm([summaryStep()]);
    try {
      const env = { LIVE_MEM_HOME: home.dir, ...llmEnv(llm), LIVE_MEM_LLM_MAX_TOKENS: '1000', LIVE_MEM_LLM_DAILY_TOKENS: '30000' };
      const run = await cli(env, ['summaries', 'update', 'proj', '--concurrency', '16', '--window-chars', '20000', '--batch-delay-ms', '0', '-q', '--json']);
      const result = JSON.parse(run.stdout);
      assert.equal(result.code, 'quota_exceeded', run.stdout);
      const spent = totals(llm.usages).tokens;
      assert.ok(llm.usages.length >= 2, `${llm.usages.length} calls`);
      assert.ok(spent <= 30_000, `${spent} tokens spent in ${llm.usages.length} calls, past the cap of 30000`);
      const report = await createCore({ storage }).spend.report(owner, { space_id: 'proj' });
      assert.equal(report.total.tokens, spent);
      assert.deepEqual(await listKeys(storage, 'proj/_spend/').then((keys) => keys.filter((key) => !key.endsWith('.json'))), [], 'no claim left behind');
    } finally {
      await llm.close();
      await home.remove();
    }
  });
});
