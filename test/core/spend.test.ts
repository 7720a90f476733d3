/** The spend ledger: every model call recorded per space with its purpose, and the daily caps. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../src/core/core.js';
import type { Limits } from '../../src/core/context.js';
import { createSamplingLlm } from '../../src/llm/sampling.js';
import { estimateTokens } from '../../src/core/tokens.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { listKeys } from '../../src/storage/list.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { FIRST_PLAN, longSynthesisPlan, plan, rewrite } from '../../fixtures/llm/scenarios.js';
import type { Caller } from '../../src/core/caller.js';
import { counting, owner } from '../helpers/core.js';
import { makeS3Harness, requireS3OrSkip } from '../helpers/s3.js';
import { startScriptedEmbeddings, type ScriptedEmbeddings } from '../helpers/scripted-embeddings.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../helpers/scripted-llm.js';
import { summaryReply, summaryStep } from '../helpers/summaries.js';

const servers: Array<ScriptedLlm | ScriptedEmbeddings> = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function setup(steps: Step[], options: { notes?: number; limits?: Partial<Limits>; storage?: StorageDriver; contextWindow?: number } = {}) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = options.storage ?? createMemoryDriver();
  const core = createCore({
    storage,
    llm: server.client({ contextWindow: options.contextWindow ?? 100_000, maxTokens: 1_000 }),
    consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 },
    ...(options.limits ? { limits: options.limits } : {}),
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < (options.notes ?? 5); i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
  return { core, storage, server };
}

const sum = (usages: Array<{ prompt: number; completion: number }>) => ({
  prompt_tokens: usages.reduce((n, u) => n + u.prompt, 0),
  completion_tokens: usages.reduce((n, u) => n + u.completion, 0),
  tokens: usages.reduce((n, u) => n + u.prompt + u.completion, 0),
  calls: usages.length,
});
const liveCount = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md')).length;
const windowPlan = (n: number): Step => ({
  reply: plan([rewrite('activeContext.md', `# Active\n\nWindow ${n}.\n`)], `Synthesis ${n}.`),
  usage: { prompt: 5_000, completion: 100 },
});

describe('spend ledger', () => {
  it('records a consolidation and its synthesis compression apart, adding up to what the model reported', async () => {
    const { core, server, storage } = await setup([{ reply: longSynthesisPlan(700) }, { reply: 'A compact synthesis.' }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.usages.length, 2);
    const report = await core.spend.report(owner, { space_id: 'proj' });
    const [planUsage, compression] = server.usages;
    const { tokens: _t, calls: _c, ...consolidationFigures } = sum([planUsage!]);
    assert.deepEqual(report.total.by_purpose.consolidation, { ...consolidationFigures, tokens: _t, calls: 1 });
    assert.deepEqual(report.total.by_purpose.synthesis, sum([compression!]));
    assert.deepEqual({ ...report.total, by_purpose: undefined }, { ...sum(server.usages), by_purpose: undefined });
    assert.equal(result.llm_tokens_used, sum(server.usages).tokens);
    assert.equal(report.days.length, 1);
    const info = await core.spaces.info(owner, { space_id: 'proj' });
    assert.equal(info.spend.today.tokens, sum(server.usages).tokens);
    assert.equal(info.spend.last_30_days.calls, 2);
    assert.equal(info.spend.daily_cap, null);
    const records = await listKeys(storage, 'proj/_spend/');
    assert.equal(records.length, 2, 'one record per call');
    assert.match(records[0]!, /^proj\/_spend\/\d{4}-\d{2}-\d{2}\/\d{8}T\d{6}-[0-9a-z]{6}\.json$/);
    await core.spaces.delete(owner, { space_id: 'proj', confirm: true });
    assert.deepEqual(await listKeys(storage, 'proj/'), [], 'the ledger goes with the space');
  });

  it('records a summaries run call by call', async () => {
    const { core, server } = await setup([summaryStep()], { notes: 0 });
    for (let i = 0; i < 8; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}. ${'z'.repeat(990)}` });
    const result = await core.summaries.update(owner, { space_id: 'proj', window_chars: 2_000, batch_delay_ms: 0 });
    assert.equal(result.status, 'ok', result.message);
    assert.ok(server.usages.length >= 3, `${server.usages.length} calls`);
    const report = await core.spend.report(owner, { space_id: 'proj' });
    assert.deepEqual(report.total.by_purpose, { summaries: sum(server.usages) });
  });

  it('records embeddings, for the documents, and for the queries as searches', async () => {
    const model = await startScriptedEmbeddings();
    servers.push(model);
    const storage = createMemoryDriver();
    const core = createCore({ storage, embeddings: model.client() });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 70; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Entry ${i} about the pipeline` });
    await core.recall.search(owner, { space_id: 'proj', query: 'pipeline' });
    await core.idle();
    await core.recall.search(owner, { space_id: 'proj', query: 'pipeline entry' });
    await core.idle();
    const figures = (requests: typeof model.requests) => {
      const tokens = requests.reduce((n, request) => n + request.input.reduce((m, text) => m + Math.ceil(text.length / 4), 0), 0);
      return { prompt_tokens: tokens, completion_tokens: 0, tokens, calls: requests.length };
    };
    const isQuery = (request: (typeof model.requests)[number]) => request.input.length === 1 && request.input[0]?.startsWith('pipeline');
    const report = await core.spend.report(owner, { space_id: 'proj' });
    assert.deepEqual(report.total.by_purpose, {
      embeddings: figures(model.requests.filter((request) => !isQuery(request))),
      search: figures(model.requests.filter(isQuery)),
    });
    assert.ok(model.requests.length >= 3, 'two document batches and a query');
  });

  it('refuses a call past the daily cap, naming it, and changes nothing', async () => {
    const { core, server, storage } = await setup([windowPlan(1)], { limits: { llmDailyTokens: 500 } });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.code, 'quota_exceeded');
    assert.match(result.message ?? '', /LIVE_MEM_LLM_DAILY_TOKENS = 500/);
    assert.match(result.message ?? '', /0 tokens already spent/);
    assert.match(result.message ?? '', /nothing was changed/);
    assert.equal(server.requests.length, 0, 'nothing was sent');
    assert.equal(await liveCount(storage), 5);
    assert.deepEqual(
      (await listKeys(storage, 'proj/bank/')).filter((key) => key.endsWith('.md')),
      [],
    );
    assert.deepEqual(await listKeys(storage, 'proj/_spend/'), []);
    const { why, ...cap } = (await core.spaces.info(owner, { space_id: 'proj' })).spend.daily_cap ?? {};
    assert.deepEqual(cap, { tokens: 500, set_by: 'LIVE_MEM_LLM_DAILY_TOKENS', search_tokens: 50 });
    assert.match(String(why), /^the daily cap LIVE_MEM_LLM_DAILY_TOKENS = 500 \(the operator's setting/);
  });

  it("a space's own cap wins over the setting, both ways; a bad one is refused", async () => {
    const open = await setup([windowPlan(1)], { limits: { llmDailyTokens: 500 } });
    await open.core.spaces.update(owner, { space_id: 'proj', llm_daily_tokens: 0 });
    assert.equal((await open.core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');

    const capped = await setup([windowPlan(1)]);
    const updated = await capped.core.spaces.update(owner, { space_id: 'proj', llm_daily_tokens: 700 });
    assert.equal(updated.llm_daily_tokens, 700);
    const result = await capped.core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.code, 'quota_exceeded');
    assert.match(result.message ?? '', /llm_daily_tokens = 700/);
    assert.equal(capped.server.requests.length, 0);

    const before = (await capped.storage.get('proj/_meta.json'))!.body.toString();
    for (const bad of [-1, 1.5, '10'] as unknown[]) {
      await assert.rejects(
        capped.core.spaces.update(owner, { space_id: 'proj', llm_daily_tokens: bad as number }),
        (e) => isLiveMemError(e, 'invalid_input') && /llm_daily_tokens/.test(e.message),
      );
    }
    assert.equal((await capped.storage.get('proj/_meta.json'))!.body.toString(), before);
  });

  it('a background consolidation stops cleanly at the cap: its job says why, the rest of the notes wait in live/', async () => {
    const { core, storage, server } = await setup([windowPlan(1), windowPlan(2)], { notes: 0, contextWindow: 4_100, limits: { llmDailyTokens: 6_000 } });
    for (let i = 0; i < 30; i++) await core.notes.write(owner, { space_id: 'proj', category: 'insight', content: `long note ${i} ${'word '.repeat(150)}` });
    const started = await core.jobs.start(owner, { space_id: 'proj' });
    await core.jobs.idle();
    const [job] = (await core.jobs.status(owner, { space_id: 'proj', job_id: started.job_id })).jobs;
    assert.equal(job?.state, 'partial');
    const result = job?.result;
    assert.ok(result && 'windows' in result, 'the consolidation’s own result, not a failure');
    assert.equal(result.code, 'quota_exceeded');
    assert.match(String(result.message), /LIVE_MEM_LLM_DAILY_TOKENS = 6000/);
    assert.match(String(result.message), /5100 tokens already spent/);
    assert.equal(server.requests.length, 1);
    assert.equal(result.windows, 1);
    assert.ok(result.notes_remaining > 0);
    assert.equal(await liveCount(storage), result.notes_remaining);
    assert.equal(await storage.get('proj/_consolidation/lock.json'), null, 'the lease is released');
  });

  it('a summaries run stops at the first refusal and says why', async () => {
    const { core, server } = await setup([{ ...summaryStep(), usage: { prompt: 3_000, completion: 100 } } as Step], {
      notes: 0,
      limits: { llmDailyTokens: 4_000 },
    });
    for (let i = 0; i < 8; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}. ${'z'.repeat(990)}` });
    const result = await core.summaries.update(owner, { space_id: 'proj', window_chars: 2_000, batch_delay_ms: 0, concurrency: 1 });
    assert.equal(result.status, 'partial');
    assert.equal(result.code, 'quota_exceeded');
    assert.equal(server.requests.length, 1);
    assert.equal(result.written, 1);
  });

  it('sums only the days asked for, reading only their records', async () => {
    const storage = counting(createMemoryDriver());
    let now = new Date('2026-03-01T10:00:00Z');
    const core = createCore({ storage, clock: () => now });
    await core.spaces.create(owner, { space_id: 'proj' });
    const spend = (at: string, tokens: number) =>
      core.context.spend.record('proj', { at, purpose: 'summaries', model: 'm', prompt_tokens: tokens, completion_tokens: 1, calls: 1 });
    await spend('2026-03-01T10:00:00Z', 100);
    await spend('2026-03-03T23:59:59Z', 200);
    await spend('2026-03-04T00:00:00Z', 400);
    now = new Date('2026-03-04T12:00:00Z');
    const fresh = createCore({ storage, clock: () => now });
    storage.reset();
    const report = await fresh.spend.report(owner, { space_id: 'proj', since: '2026-03-02T08:00:00+00:00' });
    assert.equal(report.since, '2026-03-02');
    assert.equal(report.total.prompt_tokens, 600);
    assert.deepEqual(
      report.days.map((day) => [day.day, day.tokens]),
      [
        ['2026-03-03', 201],
        ['2026-03-04', 401],
      ],
    );
    assert.equal(storage.counts.get, 2 + 1, 'the two records in range, and the meta for the cap');
    const info = await fresh.spaces.info(owner, { space_id: 'proj' });
    assert.equal(info.spend.today.tokens, 401);
    assert.equal(info.spend.last_30_days.tokens, 703, 'the first day too: within 30 days');
    await assert.rejects(fresh.spend.report(owner, { space_id: 'proj', since: '2025-01-01' }), (e) => isLiveMemError(e, 'invalid_input'));
    await assert.rejects(fresh.spend.report(owner, { space_id: 'proj', since: '2026-03-05' }), (e) => isLiveMemError(e, 'invalid_input'));
  });

  it('records the estimate, marked so, when the endpoint reports no usage (MCP sampling)', async () => {
    const storage = createMemoryDriver();
    const reply = plan([rewrite('activeContext.md', '# Active\n\nSampled.\n')]);
    let promptChars = 0;
    const sampling = createSamplingLlm(
      async (request) => {
        promptChars = request.systemPrompt.length + request.messages.reduce((n, m) => n + m.text.length, 0);
        return { text: reply, model: 'client-model', truncated: false };
      },
      { contextWindow: 100_000, maxOutputTokens: 1_000 },
    );
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'sampled note' });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' }, { llm: sampling });
    assert.equal(result.status, 'ok', result.message);
    const [key] = await listKeys(storage, 'proj/_spend/');
    const record = JSON.parse((await storage.get(key!))!.body.toString());
    assert.equal(record.estimated, true);
    assert.equal(record.model, 'client-model');
    assert.equal(record.purpose, 'consolidation');
    assert.equal(record.completion_tokens, estimateTokens(reply));
    assert.ok(Math.abs(record.prompt_tokens - promptChars / 3.5) < 20, `${record.prompt_tokens} tokens for ${promptChars} characters`);
  });

  it('the summaries run started after a consolidation stops at the cap: its job says why', async () => {
    const server = await startScriptedLlm([{ dynamic: (messages) => (messages[0]!.content.includes('memory bank') ? FIRST_PLAN : summaryReply(messages)) }]);
    servers.push(server);
    const core = createCore({
      storage: createMemoryDriver(),
      llm: server.client({ maxTokens: 1_000 }),
      consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 },
      summaries: { auto: true },
      limits: { llmDailyTokens: 3_850 },
    });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 4; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}. ${'z'.repeat(990)}` });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    await core.idle();
    const { jobs } = await core.summaries.status(owner, { space_id: 'proj' });
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.trigger, 'auto');
    assert.equal(jobs[0]!.state, 'error');
    const run = jobs[0]!.result;
    assert.ok(run && 'levels' in run, 'the run’s own result (it answered the refusal), not a thrown error');
    assert.equal(run.code, 'quota_exceeded');
    assert.match(String(run.message), /LIVE_MEM_LLM_DAILY_TOKENS = 3850/);
    assert.equal(server.requests.length, 1, 'only the consolidation was sent');
    assert.deepEqual(await core.summaries.records('proj'), []);
  });
});

const writer: Caller = { agent: 'writer', permissions: new Set(['read', 'write']), spaces: '*', canChooseAgent: false };
const reader: Caller = { agent: 'reader', permissions: new Set(['read']), spaces: '*', canChooseAgent: false };

describe('spend caps: who may set them', () => {
  const capOf = async (core: ReturnType<typeof createCore>) => (await core.spaces.info(owner, { space_id: 'proj' })).spend.daily_cap;

  it('a writer may only lower the cap in force; an admin may set any; the meta says whose it is', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage, limits: { llmDailyTokens: 5_000 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    const meta = async () => JSON.parse((await storage.get('proj/_meta.json'))!.body.toString()) as Record<string, unknown>;
    const before = await meta();
    for (const tokens of [0, 5_001, 1_000_000]) {
      await assert.rejects(
        core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: tokens, description: 'changed' }),
        (e) =>
          isLiveMemError(e, 'forbidden') && /a writer may only lower a space's daily cap, and LIVE_MEM_LLM_DAILY_TOKENS = 5000 is in force/.test(e.message),
      );
    }
    assert.deepEqual(await meta(), before, 'a refusal changes nothing, the description included');

    const lowered = await core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: 4_000 });
    assert.equal(lowered.daily_cap?.tokens, 4_000);
    assert.equal((await meta()).llm_daily_tokens_lowered, 4_000);
    assert.equal((await core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: 5_000 })).daily_cap?.tokens, 5_000, 'up to the cap above it');

    const admin = await core.spaces.update(owner, { space_id: 'proj', llm_daily_tokens: 10_000 });
    assert.deepEqual(
      { ...admin.daily_cap, why: undefined },
      { tokens: 10_000, set_by: 'llm_daily_tokens (an admin, for this space)', why: undefined, search_tokens: 1_000 },
    );
    assert.equal((await meta()).llm_daily_tokens_admin, 10_000);
    assert.equal((await meta()).llm_daily_tokens_lowered, undefined, "an admin's value is the cap: the lowered one goes");
    assert.equal((await core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: 8_000 })).daily_cap?.tokens, 8_000);
    await assert.rejects(
      core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: 12_000 }),
      (e) => isLiveMemError(e, 'forbidden') && /an admin set 10000 is in force above space 'proj': give a value from 1 to 10000/.test(e.message),
    );
    assert.equal((await capOf(core))?.tokens, 8_000);
    assert.match(String((await capOf(core))?.why), /llm_daily_tokens = 8000 a writer set for space 'proj', below 10000 \(an admin's\)/);

    const lifted = await core.spaces.update(owner, { space_id: 'proj', llm_daily_tokens: 0 });
    assert.equal(lifted.daily_cap?.tokens, 0);
    assert.match(String(lifted.daily_cap?.why), /^no cap: an admin lifted LIVE_MEM_LLM_DAILY_TOKENS = 5000 for space 'proj'/);
    assert.equal((await core.spaces.update(writer, { space_id: 'proj', llm_daily_tokens: 0 })).daily_cap?.tokens, 0, 'no cap above: 0 is no cap');
  });

  it("an older store's llm_daily_tokens, or one written by hand, only lowers the operator's cap", async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage, limits: { llmDailyTokens: 5_000 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    const meta = JSON.parse((await storage.get('proj/_meta.json'))!.body.toString()) as Record<string, unknown>;
    for (const [own, tokens, setBy] of [
      [0, 5_000, 'LIVE_MEM_LLM_DAILY_TOKENS'],
      [50_000, 5_000, 'LIVE_MEM_LLM_DAILY_TOKENS'],
      [3_000, 3_000, 'llm_daily_tokens (a writer, for this space)'],
    ] as const) {
      await storage.put('proj/_meta.json', JSON.stringify({ ...meta, llm_daily_tokens: own }));
      const cap = await capOf(core);
      assert.deepEqual([cap?.tokens, cap?.set_by], [tokens, setBy], `llm_daily_tokens: ${own}`);
    }
  });
});

describe('spend caps: calls in flight', () => {
  it("a claim left by a process that died counts until its call's timeout has passed, then goes", async () => {
    const storage = createMemoryDriver();
    let now = Date.parse('2026-03-01T10:00:00Z');
    const clock = () => new Date(now);
    const dead = createCore({ storage, clock, limits: { llmDailyTokens: 10_000 } });
    const alive = createCore({ storage, clock, limits: { llmDailyTokens: 10_000 } });
    await dead.spaces.create(owner, { space_id: 'proj' });
    await dead.context.spend.reserve('proj', 6_000, 'consolidation', 120_000); // never released: its process died
    await assert.rejects(
      alive.context.spend.reserve('proj', 5_000, 'consolidation', 120_000),
      (e) => isLiveMemError(e, 'quota_exceeded') && /6000 tokens already spent or claimed by calls in flight/.test(e.message),
    );
    now += 120_000 + 60_001;
    const claim = await alive.context.spend.reserve('proj', 5_000, 'consolidation', 120_000);
    await claim.release();
    for (let i = 0; (await listKeys(storage, 'proj/_spend/')).length > 0; i++) {
      assert.ok(i < 1_000, 'the stale hold is removed');
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('a planted hold (far ahead, or more than the cap) blocks no call; space info shows it, doctor reports it, --fix removes it', async () => {
    const storage = createMemoryDriver();
    const now = Date.parse('2026-03-01T10:00:00Z');
    const core = createCore({ storage, clock: () => new Date(now), limits: { llmDailyTokens: 10_000 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    const plant = (name: string, hold: Record<string, unknown>) => storage.put(`proj/_spend/2026-03-01/${name}.hold`, JSON.stringify(hold));
    await plant('20260301T000000-far', { purpose: 'consolidation', tokens: 9_000, expires_at: '2099-01-01T00:00:00.000Z' });
    await plant('20260301T000000-huge', { purpose: 'consolidation', tokens: 1e12, expires_at: '2026-03-01T10:05:00.000Z' });
    await plant('20260301T000000-junk', { purpose: 'consolidation', tokens: 'all', expires_at: '2026-03-01T10:05:00.000Z' });
    // A call in flight in another process, as it writes its hold: it counts, and stays.
    await plant('20260301T095900-live', { purpose: 'compaction', tokens: 1_500, expires_at: '2026-03-01T10:10:00.000Z' });

    const claim = await core.context.spend.reserve('proj', 8_000, 'consolidation', 120_000);
    await claim.release();
    await assert.rejects(
      core.context.spend.reserve('proj', 8_501, 'consolidation', 120_000),
      (e) => isLiveMemError(e, 'quota_exceeded'),
      'the live hold counts',
    );

    const info = (await core.spaces.info(owner, { space_id: 'proj' })).spend as Record<string, unknown>;
    assert.deepEqual(info.in_flight, { calls: 1, tokens: 1_500 });
    assert.equal(info.holds_not_counted, 3);
    assert.match(String(info.hint), /live-mem doctor proj --fix/);

    const found = (await core.doctor(owner, { space_id: 'proj' })).findings.filter((finding) => finding.check === 'spend-holds');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.status, 'warn');
    assert.match(found[0]?.message ?? '', /3 spend holds of 'proj' count for nothing/);
    assert.match(found[0]?.message ?? '', /far.*runs out later than any model call may last/);
    const fixed = (await core.doctor(owner, { space_id: 'proj', fix: true })).findings.filter((finding) => finding.check === 'spend-holds');
    assert.equal(fixed[0]?.fixed, true);
    assert.deepEqual(await listKeys(storage, 'proj/_spend/'), ['proj/_spend/2026-03-01/20260301T095900-live.hold'], 'the live hold is left');
    const clear = (await core.doctor(owner, { space_id: 'proj' })).findings.filter((finding) => finding.check === 'spend-holds');
    assert.deepEqual(
      clear.map((finding) => finding.status),
      ['ok'],
    );
  });

  it("a reader's searches embed their queries within their share of the cap, then rank by BM25 and say why; writers keep the rest", async () => {
    const model = await startScriptedEmbeddings();
    servers.push(model);
    const storage = createMemoryDriver();
    const core = createCore({ storage, embeddings: model.client(), limits: { llmDailyTokens: 2_000, llmSearchShare: 10 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 20; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Entry ${i} about the pipeline` });
    await core.recall.search(reader, { space_id: 'proj', query: 'pipeline' });
    await core.idle();
    const query = `pipeline entry ${'which stage of the export broke last week and why did it break '.repeat(2)}`;
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await core.recall.search(reader, { space_id: 'proj', query: `${query} ${i}` }));
    assert.ok(
      results.every((result) => result.status === 'ok' && result.results.length > 0),
      'never refused',
    );
    const hybrid = results.filter((result) => result.mode === 'hybrid').length;
    assert.ok(hybrid >= 1 && hybrid < 20, `${hybrid} hybrid searches`);
    const fallback = results[results.length - 1];
    assert.equal(fallback?.mode, 'bm25');
    assert.match(
      String(fallback?.fallback),
      /^BM25 alone: the query was not embedded, .* would pass 200 tokens, the share of the daily cap that searches' query embeddings may use \(LIVE_MEM_LLM_SEARCH_SHARE = 10% of the daily cap LIVE_MEM_LLM_DAILY_TOKENS = 2000/,
    );
    const report = await core.spend.report(owner, { space_id: 'proj' });
    assert.ok((report.total.by_purpose.search?.tokens ?? 0) <= 200, JSON.stringify(report.total.by_purpose));
    const writers = await core.context.spend.reserve('proj', 2_000 - 200 - (report.total.by_purpose.embeddings?.tokens ?? 0), 'consolidation', 1_000);
    await writers.release();
  });
});

/** Two processes (two cores, each its own ledger) on one store: claims at once, and calls in flight seen across. */
function twoProcesses(label: string, makeStorage: () => Promise<{ storage: StorageDriver; remove(): Promise<void> }>): void {
  describe(`spend caps: calls in flight across processes, on ${label}`, () => {
    it(`calls claimed at once from two processes never pass the cap together; each sees the other's calls in flight (${label})`, async () => {
      const { storage, remove } = await makeStorage();
      try {
        const [a, b] = [0, 1].map(() => createCore({ storage, limits: { llmDailyTokens: 10_000 } })) as [
          ReturnType<typeof createCore>,
          ReturnType<typeof createCore>,
        ];
        await a.spaces.create(owner, { space_id: 'proj' });
        const claim = (core: typeof a) => core.context.spend.reserve('proj', 1_000, 'summaries', 60_000);
        const settled = async (claims: Array<Promise<Awaited<ReturnType<typeof claim>>>>) => {
          const all = await Promise.allSettled(claims);
          for (const one of all) if (one.status === 'rejected') assert.ok(isLiveMemError(one.reason, 'quota_exceeded'), String(one.reason));
          return all.flatMap((one) => (one.status === 'fulfilled' ? [one.value] : []));
        };
        const noHold = async () =>
          assert.deepEqual(
            (await listKeys(storage, 'proj/_spend/')).filter((key) => !key.endsWith('.json')),
            [],
            'no hold left',
          );

        // Racing: both may be refused where one would fit (each sees the other's holds), never both let through.
        const raced = await settled(Array.from({ length: 24 }, (_, i) => claim(i % 2 === 0 ? a : b)));
        assert.ok(raced.length <= 10, `${raced.length} claims of 1000 under a cap of 10000`);
        await Promise.all(raced.map((one) => one.release()));
        await noHold();

        // Six calls in flight in one process: the other may start four more, not five.
        const inA = await settled(Array.from({ length: 6 }, () => claim(a)));
        assert.equal(inA.length, 6);
        const inB = await settled(Array.from({ length: 5 }, () => claim(b)));
        assert.equal(inB.length, 4);
        await Promise.all([...inA, ...inB].map((one) => one.record({ model: 'm', prompt_tokens: 900, completion_tokens: 50, estimated: false })));
        await Promise.all([...inA, ...inB].map((one) => one.release()));
        await noHold();
        assert.equal((await a.spend.report(owner, { space_id: 'proj' })).total.tokens, 10 * 950);
        assert.equal((await settled([claim(b), claim(b)])).length, 0, 'what was spent counts: 9500 + 1000 would pass');
      } finally {
        await remove();
      }
    });
  });
}

twoProcesses('the memory driver', async () => ({ storage: createMemoryDriver(), remove: async () => undefined }));
const s3 = requireS3OrSkip('spend holds on S3');
if (s3)
  twoProcesses('S3 (radosgw)', async () => {
    const harness = await makeS3Harness();
    return { storage: harness.driver, remove: harness.cleanup };
  });
