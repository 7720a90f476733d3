/** core.events: what a consolidation wrote and the spaces created or deleted, told to in-process listeners. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DEFAULT_FILES, FIRST_PLAN, scenarios } from '../../fixtures/llm/scenarios.js';
import { createCore } from '../../src/core/core.js';
import type { CoreEvent } from '../../src/core/events.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';

describe('core events', () => {
  let llm: ScriptedLlm;
  after(async () => llm?.close());

  it('tells the bank files a consolidation created or updated, the synthesis, and spaces created and deleted', async () => {
    llm = await startScriptedLlm([{ reply: FIRST_PLAN }, ...scenarios.sectionEdits]);
    const core = createCore({ storage: createMemoryDriver(), llm: llm.client(), consolidation: { retryBackoffMs: 5 } });
    const events: CoreEvent[] = [];
    core.events.on(() => {
      throw new Error('a broken listener');
    });
    const stop = core.events.on((event) => events.push(event));

    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'first' });
    const first = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(first.status, 'ok', 'a failing listener does not fail the consolidation');
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'second' });
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).notes_processed, 0, 'nothing to do: no event');

    const byName = (a: { filename: string }, b: { filename: string }) => (a.filename < b.filename ? -1 : 1);
    const sorted = events.map((event) => (event.type === 'bank_changed' ? { ...event, files: [...event.files].sort(byName) } : event));
    assert.deepEqual(sorted, [
      { type: 'space_created', space_id: 'proj' },
      {
        type: 'bank_changed',
        space_id: 'proj',
        files: DEFAULT_FILES.map((filename) => ({ filename, kind: 'created' })).sort(byName),
        synthesis: true,
      },
      {
        type: 'bank_changed',
        space_id: 'proj',
        files: [
          { filename: 'activeContext.md', kind: 'updated' },
          { filename: 'progress.md', kind: 'updated' },
        ],
        synthesis: true,
      },
    ]);

    await core.spaces.delete(owner, { space_id: 'proj', confirm: true });
    assert.deepEqual(events.at(-1), { type: 'space_deleted', space_id: 'proj' });
    stop();
    await core.spaces.create(owner, { space_id: 'other' });
    assert.equal(events.length, 4, 'a stopped listener hears nothing more');
  });
});
