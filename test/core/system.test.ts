import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../src/core/core.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { ANONYMOUS } from '../../src/core/auth/auth-service.js';

describe('system_health', () => {
  it('reports the store and the model, checking the model without spending tokens, at most once a minute', async () => {
    const llm = await startScriptedLlm([{ reply: '{}' }]);
    try {
      const core = createCore({ storage: createMemoryDriver(), llm: llm.client() });
      await core.spaces.create(owner, { space_id: 'a' });
      const first = await core.health(owner);
      assert.equal(first.status, 'ok');
      assert.equal(first.services.storage.status, 'ok');
      assert.equal(typeof first.services.storage.latency_ms, 'number');
      assert.equal(first.services.llm.status, 'ok');
      assert.equal(first.spaces_count, 1);
      await core.health(owner);
      assert.equal(llm.modelListings, 1, 'cached');
      assert.equal(llm.requests.length, 0, 'no completion, no token spent');
      assert.equal((await core.health(ANONYMOUS)).spaces_count, 0, 'counts only what the caller may see');
    } finally {
      await llm.close();
    }
  });

  it('says when no model is configured, and when it is unreachable', async () => {
    const none = await createCore({ storage: createMemoryDriver() }).health(owner);
    assert.equal(none.services.llm.status, 'missing');
    assert.match(String(none.services.llm.fix), /LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL/);
    assert.equal((await createCore({ storage: createMemoryDriver() }).health(owner, { sampling: true })).services.llm.status, 'sampling');
    const llm = await startScriptedLlm([{ reply: '{}' }]);
    const client = llm.client();
    await llm.close();
    const down = await createCore({ storage: createMemoryDriver(), llm: client }).health(owner);
    assert.equal(down.services.llm.status, 'error');
    assert.equal(down.status, 'ok', 'the store is fine: consolidation waits, notes do not');
  });
});
