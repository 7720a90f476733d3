/**
 * An agent-written consolidation that leaves a bank file over its budget, with no model to compact
 * it (compaction runs by itself only with one): the answer says so and what to do, never a silent ok.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { owner } from '../../helpers/core.js';
import { writePlan } from '../../helpers/plan-writer.js';
import { startScriptedLlm } from '../../helpers/scripted-llm.js';

const RULES = '# Rules\n\n## Files\n\n### activeContext.md\nThe present. Budget: 60 tokens\n';

async function oversizedSubmit(withModel: boolean) {
  const llm = withModel ? await startScriptedLlm([]) : undefined;
  try {
    const core = createCore({ storage: createMemoryDriver(), ...(llm ? { llm: llm.client() } : {}) });
    await core.spaces.create(owner, { space_id: 'proj', rules: RULES });
    await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: 'The API listens on port 8443.' });
    const pkg = (await core.consolidation.ask(owner, { space_id: 'proj' })) as { handle: string; prompt: string };
    return (await core.consolidation.submit(owner, { space_id: 'proj', handle: pkg.handle }, writePlan(pkg, { padTo: 800 }))) as {
      status: string;
      warnings?: string[];
    };
  } finally {
    await llm?.close();
  }
}

describe('an agent plan that leaves a file over its budget', () => {
  it('without a model: committed, and the answer says the file is over budget and what to do', async () => {
    const done = await oversizedSubmit(false);
    assert.equal(done.status, 'ok');
    const warning = done.warnings?.find((text) => text.startsWith('activeContext.md is over its budget'));
    assert.match(
      warning ?? '',
      /^activeContext\.md is over its budget \(\d+ of 60 tokens\) and no model is configured to compact it: in a later plan, rewrite/,
    );
  });

  it('with a model: compaction will see to it, nothing to say', async () => {
    const done = await oversizedSubmit(true);
    assert.equal(done.status, 'ok');
    assert.ok(!(done.warnings ?? []).some((text) => /over its budget/.test(text)), JSON.stringify(done.warnings));
  });
});
