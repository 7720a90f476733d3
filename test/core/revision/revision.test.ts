/**
 * Corrections by people (issue 21): bank_write, bank_delete, space_update_rules and bank_revert, each a
 * compare-and-swap against what the caller read, under the space's lease, recorded in history as a
 * revision that can be reverted to the exact previous text.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { checkPending } from '../../../src/core/commit/pending.js';
import { lockSpace } from '../../../src/core/commit/space-lock.js';
import { commitKinds, createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { FIRST_PLAN } from '../../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';
import { ownerCaller } from '../../../src/core/caller.js';
import { AWS_ID } from '../../helpers/secret-samples.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function setup(steps: Step[] = [], storage: StorageDriver = createMemoryDriver()) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const core = createCore({
    storage,
    clock: steppingClock('2026-03-01T10:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
    summaries: { auto: false },
    compaction: { auto: false },
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  return { core, storage, server };
}

const text = async (storage: StorageDriver, key: string) => (await storage.get(key))?.body.toString('utf8');
const refusedWith = (code: string) => (error: unknown) => isLiveMemError(error, code as never);

describe('corrections by people, recorded as revisions', () => {
  it('write: create, then change against the version read; history says who and why; revert restores the exact text', async () => {
    const { core, storage } = await setup();
    const created = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'decisions.md',
      content: '# Decisions\n\n- use Postgres\n',
      reason: 'seed',
    });
    assert.equal(created.status, 'created');
    const read = await core.bank.read(owner, { space_id: 'proj', filename: 'decisions.md' });
    assert.equal(read.version, created.version);

    // An existing file needs the version read; a stale one is refused and changes nothing.
    await assert.rejects(core.revisions.write(owner, { space_id: 'proj', filename: 'decisions.md', content: 'x' }), refusedWith('invalid_input'));
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: 'decisions.md', content: 'x', if_match: '0123456789abcdef' }),
      refusedWith('conflict'),
    );
    assert.equal(await text(storage, 'proj/bank/decisions.md'), '# Decisions\n\n- use Postgres\n');

    const changed = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'decisions.md',
      content: '# Decisions\n\n- use SQLite (Postgres was a hallucination)\n',
      if_match: read.version,
      reason: 'the model invented Postgres',
    });
    assert.equal(changed.status, 'ok');
    assert.equal(await text(storage, 'proj/bank/decisions.md'), '# Decisions\n\n- use SQLite (Postgres was a hallucination)\n');

    const history = await core.history.list(owner, { space_id: 'proj' });
    const [newest, first] = history.consolidations;
    assert.equal(newest?.kind, 'revision');
    assert.equal(newest?.consolidation_id, changed.revision_id);
    assert.equal(newest?.action, 'write');
    assert.equal(newest?.by, owner.agent);
    assert.equal(newest?.reason, 'the model invented Postgres');
    assert.equal(first?.consolidation_id, created.revision_id);
    const entry = await core.history.read(owner, { space_id: 'proj', consolidation_id: changed.revision_id });
    assert.deepEqual(entry.preimages, [{ filename: 'decisions.md', path: [], content: '# Decisions\n\n- use Postgres\n' }]);

    // The earlier text is still found, told apart from the bank's current text.
    const hits = await core.recall.search(owner, { space_id: 'proj', query: 'Postgres', sources: ['bank_history'] });
    assert.ok(
      hits.results.some((hit) => hit.source === 'bank_history' && hit.text.includes('use Postgres')),
      JSON.stringify(hits.results),
    );

    await assert.rejects(core.revisions.revert(owner, { space_id: 'proj', revision_id: changed.revision_id }), refusedWith('invalid_input'));
    const reverted = await core.revisions.revert(owner, { space_id: 'proj', revision_id: changed.revision_id, confirm: true, reason: 'undo' });
    assert.equal(reverted.reverted, changed.revision_id);
    assert.equal(await text(storage, 'proj/bank/decisions.md'), '# Decisions\n\n- use Postgres\n', 'the exact previous text');
    const again = await core.history.list(owner, { space_id: 'proj' });
    assert.equal(again.consolidations[0]?.action, 'revert');
    assert.equal(again.consolidations[0]?.reverts, changed.revision_id);

    // The creation is reverted (the file deleted) only while the file is as the creation left it: it is, again.
    await core.revisions.revert(owner, { space_id: 'proj', revision_id: created.revision_id, confirm: true });
    assert.equal(await storage.get('proj/bank/decisions.md'), null);
  });

  it('section edits, as consolidation plans use them', async () => {
    const { core, storage } = await setup();
    const { version } = await core.revisions.write(owner, { space_id: 'proj', filename: 'notes.md', content: '# Notes\n\n## Open\n\n- a\n\n## Done\n\n- b\n' });
    await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'notes.md',
      edits: [
        { op: 'append', section: 'Notes > Open', content: '- c' },
        { op: 'delete', section: 'Notes > Done' },
      ],
      if_match: version,
    });
    assert.equal(await text(storage, 'proj/bank/notes.md'), '# Notes\n\n## Open\n\n- a\n\n- c\n\n');
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: 'notes.md', edits: [{ op: 'replace', section: 'Nowhere', content: 'x' }], if_match: 'x' }),
      refusedWith('conflict'),
    );
    const now = await core.bank.read(owner, { space_id: 'proj', filename: 'notes.md' });
    await assert.rejects(
      core.revisions.write(owner, {
        space_id: 'proj',
        filename: 'notes.md',
        edits: [{ op: 'replace', section: 'Nowhere', content: 'x' }],
        if_match: now.version,
      }),
      refusedWith('invalid_input'),
    );
    await assert.rejects(core.revisions.write(owner, { space_id: 'proj', filename: 'notes.md', content: 'x', edits: [] }), refusedWith('invalid_input'));
    await assert.rejects(core.revisions.write(owner, { space_id: 'proj', filename: '../escape.md', content: 'x' }), refusedWith('invalid_input'));
    assert.equal(await text(storage, 'proj/bank/notes.md'), '# Notes\n\n## Open\n\n- a\n\n- c\n\n', 'refusals change nothing');
  });

  it('delete needs confirm, keeps the text in history, and a revert brings the file back byte for byte', async () => {
    const { core, storage } = await setup();
    const body = '# Secrets\n\nnothing here — café ✓\n';
    await core.revisions.write(owner, { space_id: 'proj', filename: 'gone.md', content: body });
    await assert.rejects(core.revisions.delete(owner, { space_id: 'proj', filename: 'gone.md' }), refusedWith('invalid_input'));
    const deleted = await core.revisions.delete(owner, { space_id: 'proj', filename: 'gone.md', confirm: true, reason: 'obsolete' });
    assert.equal(deleted.status, 'deleted');
    assert.equal(await storage.get('proj/bank/gone.md'), null);
    await assert.rejects(core.revisions.delete(owner, { space_id: 'proj', filename: 'gone.md', confirm: true }), refusedWith('not_found'));
    await core.revisions.revert(owner, { space_id: 'proj', revision_id: deleted.revision_id, confirm: true });
    assert.equal(await text(storage, 'proj/bank/gone.md'), body);
  });

  it('space_update_rules: compare-and-swap on the version space_rules gave; revert restores the old rules exactly', async () => {
    const { core, storage } = await setup();
    const before = await core.spaces.rules(owner, { space_id: 'proj' });
    await assert.rejects(core.revisions.updateRules(owner, { space_id: 'proj', rules: '# New rules\n' }), refusedWith('invalid_input'));
    await assert.rejects(core.revisions.updateRules(owner, { space_id: 'proj', rules: '   ', if_match: before.version }), refusedWith('invalid_input'));
    const updated = await core.revisions.updateRules(owner, {
      space_id: 'proj',
      rules: '# New rules\n\n### only.md\nBudget: 500 tokens\n',
      if_match: before.version,
    });
    assert.equal((await core.spaces.rules(owner, { space_id: 'proj' })).version, updated.version);
    await assert.rejects(core.revisions.updateRules(owner, { space_id: 'proj', rules: '# Other\n', if_match: before.version }), refusedWith('conflict'));
    const entry = await core.history.read(owner, { space_id: 'proj', consolidation_id: updated.revision_id });
    assert.equal((entry.consolidation.revision as { rules: { before: string } }).rules.before, before.rules);
    await core.revisions.revert(owner, { space_id: 'proj', revision_id: updated.revision_id, confirm: true });
    assert.equal(await text(storage, 'proj/_rules.md'), before.rules);
  });

  it('a revert is refused while a file changed since the revision (a consolidation or another correction); nothing changes', async () => {
    const { core, storage } = await setup([{ reply: FIRST_PLAN }]);
    const first = await core.revisions.write(owner, { space_id: 'proj', filename: 'a.md', content: '# A\n\none\n' });
    const second = await core.revisions.write(owner, { space_id: 'proj', filename: 'a.md', content: '# A\n\ntwo\n', if_match: first.version });
    await assert.rejects(core.revisions.revert(owner, { space_id: 'proj', revision_id: first.revision_id, confirm: true }), refusedWith('conflict'));
    assert.equal(await text(storage, 'proj/bank/a.md'), '# A\n\ntwo\n');
    // Only a person's correction is reverted: a consolidation is not.
    await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'x' });
    const consolidated = (await core.consolidation.consolidate(owner, { space_id: 'proj' })).consolidations[0] as string;
    await assert.rejects(core.revisions.revert(owner, { space_id: 'proj', revision_id: consolidated, confirm: true }), refusedWith('invalid_input'));
    assert.ok(second.revision_id);
  });

  it("a person's text is held to what a note is: secrets masked, <private> not stored (the answer says so)", async () => {
    const { core, storage } = await setup();
    const written = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'ops.md',
      content: `# Ops\n\nthe deploy key is ${AWS_ID}<private> and the root password is hunter2</private>\n`,
    });
    assert.deepEqual(written.redacted, [{ kind: 'aws-access-key-id', count: 1 }]);
    assert.equal(written.private_removed, 1);
    const stored = (await text(storage, 'proj/bank/ops.md')) ?? '';
    assert.ok(!stored.includes(AWS_ID) && !stored.includes('hunter2'), stored);
    assert.match(stored, /\[redacted: aws-access-key-id\]/);
  });

  it('only an admin of the space corrects; a writer is forbidden and nothing changes', async () => {
    const { core, storage } = await setup();
    const writer = { ...ownerCaller('writer'), permissions: new Set(['read', 'write'] as const), localOwner: false };
    await assert.rejects(core.revisions.write(writer, { space_id: 'proj', filename: 'x.md', content: '# X\n' }), refusedWith('forbidden'));
    await assert.rejects(core.revisions.updateRules(writer, { space_id: 'proj', rules: '# R\n', if_match: 'x' }), refusedWith('forbidden'));
    assert.equal(await storage.get('proj/bank/x.md'), null);
  });
});

describe('a correction racing a consolidation', () => {
  it('the version read before a consolidation committed is refused (conflict): the consolidation is not overwritten', async () => {
    const { core, storage } = await setup([
      { reply: FIRST_PLAN },
      { reply: FIRST_PLAN.replace('What the notes said about activeContext.md.', 'Consolidated later.') },
    ]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one' });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const read = await core.bank.read(owner, { space_id: 'proj', filename: 'activeContext.md' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'two' });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: 'activeContext.md', content: '# Mine\n', if_match: read.version }),
      refusedWith('conflict'),
    );
    assert.match((await text(storage, 'proj/bank/activeContext.md')) ?? '', /Consolidated later/);
  });

  it('while a consolidation holds the lease, a correction waits for it, then compares against what it committed', async () => {
    const { core, storage } = await setup([{ delayMs: 600, then: { reply: FIRST_PLAN } }]);
    await core.spaces.create(owner, { space_id: 'other' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one' });
    const running = core.consolidation.consolidate(owner, { space_id: 'proj' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Read before the commit: no file yet, so the correction expects to create it.
    const correction = core.revisions.write(owner, { space_id: 'proj', filename: 'activeContext.md', content: '# Mine\n' });
    const [consolidated, corrected] = await Promise.allSettled([running, correction]);
    assert.equal(consolidated.status === 'fulfilled' && consolidated.value.status, 'ok');
    assert.equal(corrected.status, 'rejected', 'the file exists now: the correction, which expected none, is refused');
    assert.ok(
      refusedWith('invalid_input')((corrected as PromiseRejectedResult).reason) || refusedWith('conflict')((corrected as PromiseRejectedResult).reason),
    );
    assert.match((await text(storage, 'proj/bank/activeContext.md')) ?? '', /What the notes said/);
  });

  it('a consolidation started while a correction holds the lease gets conflict and keeps its notes', async () => {
    const { core, storage } = await setup([{ reply: FIRST_PLAN }]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one' });
    const held = await lockSpace(core.context, 'proj', owner, 'revision');
    try {
      await assert.rejects(core.consolidation.consolidate(owner, { space_id: 'proj' }), /busy: a revision is already running/);
    } finally {
      await held.release();
    }
    assert.equal((await storage.list('proj/live/')).objects.filter((o) => o.key.endsWith('.md')).length, 1);
  });
});

describe('a revision record is input', () => {
  it('a pending revision that changes the rules or deletes a file is checked; a malformed one is refused', () => {
    const base = {
      id: '20260301T100000-abcdef',
      space_id: 'proj',
      kind: 'revision',
      committed_at: '2026-03-01T10:00:00Z',
      notes: [],
      time_range: { oldest: null, newest: null },
      writes: [{ filename: 'a.md', content: '', expectedEtag: 'e1', kind: 'deleted' }],
      metrics: {},
      preimages: [{ filename: 'a.md', path: [], content: 'old' }],
      revision: { action: 'delete', by: 'me', reason: null, files: [{ filename: 'a.md', existed: true, version_after: null }] },
    };
    const check = (record: unknown) => checkPending(Buffer.from(JSON.stringify(record)), 'proj', commitKinds()).state;
    assert.equal(check(base), 'valid');
    assert.equal(check({ ...base, revision: undefined }), 'invalid');
    assert.equal(check({ ...base, preimages: [{ filename: 'a.md', path: ['Section'], content: 'old' }] }), 'invalid');
    assert.equal(check({ ...base, kind: 'consolidation', synthesis: { content: '', expectedEtag: null } }), 'invalid', 'only a revision deletes');
    assert.equal(check({ ...base, rules: { content: 7 } }), 'invalid');
    assert.equal(check({ ...base, writes: [{ filename: '../x.md', content: '', expectedEtag: 'e', kind: 'deleted' }] }), 'invalid');
  });
});
