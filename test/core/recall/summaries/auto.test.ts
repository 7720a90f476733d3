/** The background summaries run after a consolidation: on with a configured model, off when LIVE_MEM_SUMMARIES=off. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../../../src/core/core.js';
import { resolveSettings } from '../../../../src/config/settings.js';
import { acquireLease } from '../../../../src/storage/lease.js';
import { listKeys } from '../../../../src/storage/list.js';
import { createMemoryDriver } from '../../../../src/storage/memory/memory-driver.js';
import { FIRST_PLAN } from '../../../../fixtures/llm/scenarios.js';
import { owner } from '../../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../../helpers/scripted-llm.js';
import { summaryReply } from '../../../helpers/summaries.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** One model for both: a consolidation plan for consolidation prompts, a summary for the others. */
async function setup(auto: boolean) {
  const server = await startScriptedLlm([{ dynamic: (messages) => (messages[0]!.content.includes('memory bank') ? FIRST_PLAN : summaryReply(messages)) }]);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({ storage, llm: server.client(), consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 }, summaries: { auto } });
  await core.spaces.create(owner, { space_id: 'proj' });
  // 4 × 1000 characters: one open level-1 window with the default sizes (6000 ± 20%, 3000 to flush).
  for (let i = 0; i < 4; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i}. ${'z'.repeat(990)}` });
  return { core, storage, server };
}

describe('summaries after a consolidation', () => {
  it('start in the background when a model is configured, and cover the consolidated notes', async () => {
    const { core, storage, server } = await setup(true);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    await core.idle();
    const { jobs } = await core.summaries.status(owner, { space_id: 'proj' });
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.trigger, 'auto');
    assert.equal(jobs[0]!.state, 'ok', JSON.stringify(jobs[0]!.result));
    const run = jobs[0]!.result;
    assert.ok(run && 'written' in run, 'the run’s own result, not a failure');
    assert.equal(run.written, 1);
    const summaries = await core.summaries.records('proj');
    assert.equal(summaries.length, 1);
    assert.equal(summaries[0]!.covers.length, 4);
    assert.equal(summaries[0]!.sealed, false, 'an open window: rewritten as notes come');
    assert.equal(server.requests.length, 2, 'one consolidation call, one summary call');
    const listed = await core.summaries.list(owner, { space_id: 'proj' });
    assert.equal(listed.last_job?.state, 'ok');
    assert.equal(await storage.get('proj/_summaries/lock.json'), null);
  });

  it("skip silently when another runner holds the space's summaries lease", async () => {
    const { core, storage, server } = await setup(true);
    const lease = await acquireLease(storage, 'proj/_summaries/lock.json', { owner: 'summaries:elsewhere', ttlMs: 60_000 });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    await core.idle();
    assert.deepEqual((await core.summaries.status(owner, { space_id: 'proj' })).jobs, [], 'no job: the other runner catches up');
    assert.equal(server.requests.length, 1);
    await lease.release();
  });

  it('do not start when LIVE_MEM_SUMMARIES=off', async () => {
    assert.equal(resolveSettings({ env: { LIVE_MEM_SUMMARIES: 'off' } }).summaries, 'off');
    assert.equal(resolveSettings({ env: {} }).summaries, 'auto');
    assert.throws(() => resolveSettings({ env: { LIVE_MEM_SUMMARIES: 'sometimes' } }), /LIVE_MEM_SUMMARIES/);
    assert.equal(resolveSettings({ env: { LIVE_MEM_SUMMARY_WINDOW_CHARS: '4000' } }).summaryWindowChars, 4000);
    const { core, storage, server } = await setup(false);
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    await core.idle();
    assert.deepEqual(await listKeys(storage, 'proj/_summaries/'), []);
    assert.equal(server.requests.length, 1);
  });

  it('do not start without a configured model', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'x'.repeat(4000) });
    const server = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    servers.push(server);
    // A model for this call only (as MCP sampling gives): the consolidation runs, no background summaries.
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' }, { llm: server.client() })).status, 'ok');
    await core.idle();
    assert.deepEqual(await listKeys(storage, 'proj/_summaries/'), []);
  });
});
