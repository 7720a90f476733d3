/**
 * A plan whose result hides sections it does not delete — an edit or a rewrite opening a code fence
 * it never closes, which turns every later heading into code — is refused like any other guard (one
 * more chance, told why), the bank unchanged and the notes still live. Before, such a plan passed
 * the append-only and heading guards and committed `ok` with the outline gone from Log, Decisions,
 * Next to Log.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { edit, plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const JOURNAL = '# Journal\n\n## Log\n\n- started\n\n## Decisions\n\n- Postgres\n\n## Next\n\n- backups\n';
const ACTIVE = '# Active Context\n\n## Focus\n\n- the importer\n\n## Open questions\n\n- none\n';

async function setup(steps: Step[]) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  await storage.put('proj/bank/journal.md', JOURNAL);
  await storage.put('proj/bank/activeContext.md', ACTIVE);
  for (let i = 0; i < 2; i++) await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: `note ${i}` });
  return { core, storage, server };
}

const text = async (storage: StorageDriver, file: string) => (await storage.get(`proj/bank/${file}`))?.body.toString('utf8');
const live = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((key) => key.endsWith('.md')).length;

const unclosedAppend = plan([edit('journal.md', [{ op: 'append', section: 'Journal > Log', content: '- ran the tests:\n\n```sh\nnpm test' }])]);
const closedAppend = plan([edit('journal.md', [{ op: 'append', section: 'Journal > Log', content: '- ran the tests:\n\n```sh\nnpm test\n```' }])]);

/** Refused twice: an error, one retry told why, nothing written, the notes still live. */
async function assertRefusedTwice(steps: Step[], pattern: RegExp): Promise<void> {
  const { core, storage, server } = await setup(steps);
  const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
  assert.equal(result.status, 'error', result.message);
  assert.equal(result.code, 'invalid_input');
  assert.match(result.message ?? '', pattern);
  assert.match(result.message ?? '', /nothing was changed$/);
  assert.equal(server.requests.length, 2, 'asked once more, told why');
  assert.match(server.requests[1]?.messages.at(-1)?.content ?? '', pattern);
  assert.equal(await text(storage, 'journal.md'), JOURNAL);
  assert.equal(await text(storage, 'activeContext.md'), ACTIVE);
  assert.equal(await live(storage), 2);
  assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
}

describe('consolidation: a plan never hides sections it does not delete', () => {
  it('refuses an edit that opens a code fence and never closes it, twice: nothing written, the notes still live', () =>
    assertRefusedTwice(
      [{ reply: unclosedAppend }],
      /journal\.md: the edit \(append "Journal > Log"\) hides 2 section\(s\): "Journal > Decisions", "Journal > Next"/,
    ));

  it('asks once more with the reason, and commits the corrected plan with every section in place', async () => {
    const { core, storage, server } = await setup([{ reply: unclosedAppend }, { reply: closedAppend }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.match(result.warnings?.join('\n') ?? '', /plan was refused \(journal\.md: the edit .* hides 2 section/);
    assert.match(server.requests[1]?.messages.at(-1)?.content ?? '', /hides 2 section\(s\): "Journal > Decisions", "Journal > Next"/);
    const journal = (await text(storage, 'journal.md')) ?? '';
    assert.match(journal, /```sh\nnpm test\n```\n\n## Decisions\n\n- Postgres\n\n## Next\n\n- backups\n$/);
    assert.equal(await live(storage), 0);
  });

  it('refuses a whole rewrite whose unclosed fence turns the later sections into code', () =>
    assertRefusedTwice(
      [{ reply: plan([rewrite('journal.md', JOURNAL.replace('- started\n', '- started\n\n```sh\nnpm test\n'))]) }],
      /journal\.md: written whole, it hides 2 section\(s\): "Journal > Decisions", "Journal > Next"/,
    ));

  it('refuses a rewrite that drops a section of a file the rules do not say is rewritten whole', () =>
    assertRefusedTwice(
      [{ reply: plan([rewrite('journal.md', JOURNAL.replace('## Decisions\n\n- Postgres\n\n', ''))]) }],
      /hides 1 section\(s\): "Journal > Decisions"/,
    ));

  it('lets a file the rules say is rewritten at every consolidation (activeContext.md) drop sections, but not leave a fence open', async () => {
    const open = plan([rewrite('activeContext.md', '# Active Context\n\n```sh\nnpm test\n')]);
    const { core, storage } = await setup([{ reply: plan([rewrite('activeContext.md', '# Active Context\n\nNow: backups.\n')]) }, { reply: open }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(await text(storage, 'activeContext.md'), '# Active Context\n\nNow: backups.\n');

    await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'more' });
    const spoiled = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(spoiled.status, 'error');
    assert.match(spoiled.message ?? '', /activeContext\.md: written whole, it leaves a code fence open at the end/);
    assert.equal(await text(storage, 'activeContext.md'), '# Active Context\n\nNow: backups.\n');
  });

  it("refuses a person's bank_write edits that hide sections: nothing written", async () => {
    const { core, storage } = await setup([]);
    const read = await core.bank.read(owner, { space_id: 'proj', filename: 'journal.md' });
    await assert.rejects(
      core.revisions.write(owner, {
        space_id: 'proj',
        filename: 'journal.md',
        if_match: read.version,
        edits: [{ op: 'append', section: 'Log', content: '```\nnpm test' }],
      }),
      (error) => isLiveMemError(error, 'invalid_input') && /hides 2 section\(s\)/.test(error.message),
    );
    assert.equal(await text(storage, 'journal.md'), JOURNAL);
    assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
  });
});
