/**
 * Corrections that say they removed a secret, and corrections of the synthesis (issue 28): a
 * correction with `secret` keeps the earlier text without the lines it removed (the pre-image, the
 * rules before), so what a person took out is kept nowhere readable; the synthesis is read, written,
 * deleted and reverted as a bank file, by its reserved name `_synthesis.md`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const SECRET = 'Zq7xOrchid-4471-Quench';
const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function setup(steps: Step[] = []) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
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

/** Every stored byte of the space but the bank and the synthesis (what a person reads and corrects). */
async function keptElsewhere(storage: ReturnType<typeof createMemoryDriver>): Promise<string[]> {
  const found: string[] = [];
  for (const key of await listKeys(storage, 'proj/')) {
    if (key.startsWith('proj/bank/') || key === 'proj/_synthesis.md' || key === 'proj/_rules.md') continue;
    if ((await storage.get(key))?.body.includes(SECRET)) found.push(key);
  }
  return found;
}

describe('a correction that says it removed a secret', () => {
  it('keeps the earlier text without the lines it removed; revert puts back the rest', async () => {
    const { core, storage } = await setup();
    const before = `# Infra\n\n- cache: redis\n- cache password: ${SECRET}\n- deploy: friday\n`;
    await core.revisions.write(owner, { space_id: 'proj', filename: 'infra.md', content: before });
    const read = await core.bank.read(owner, { space_id: 'proj', filename: 'infra.md' });
    const written = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'infra.md',
      content: '# Infra\n\n- cache: redis\n- deploy: friday\n',
      if_match: read.version,
      secret: true,
      reason: 'a password',
    });
    assert.equal(written.secret, true);
    const history = await core.history.read(owner, { space_id: 'proj', consolidation_id: written.revision_id });
    assert.deepEqual(
      history.preimages.map((p) => p.content),
      ['# Infra\n\n- cache: redis\n[redacted: removed as a secret by a correction]\n- deploy: friday\n'],
    );
    assert.deepEqual(await keptElsewhere(storage), [], 'the secret is kept nowhere');
    const listed = await core.history.list(owner, { space_id: 'proj' });
    assert.equal((listed.consolidations[0] as { secret?: boolean }).secret, true);
    const search = await core.recall.search(owner, { space_id: 'proj', query: 'cache password', limit: 20 });
    assert.ok(!JSON.stringify(search).includes(SECRET));

    await core.revisions.revert(owner, { space_id: 'proj', revision_id: written.revision_id, confirm: true });
    assert.equal(
      (await core.bank.read(owner, { space_id: 'proj', filename: 'infra.md' })).content,
      '# Infra\n\n- cache: redis\n[redacted: removed as a secret by a correction]\n- deploy: friday\n',
    );
  });

  it('a deletion and a change of the rules, the same way', async () => {
    const { core, storage } = await setup();
    await core.revisions.write(owner, { space_id: 'proj', filename: 'keys.md', content: `# Keys\n\n${SECRET}\n` });
    const deleted = await core.revisions.delete(owner, { space_id: 'proj', filename: 'keys.md', confirm: true, secret: true });
    const history = await core.history.read(owner, { space_id: 'proj', consolidation_id: deleted.revision_id });
    assert.deepEqual(
      history.preimages.map((p) => p.content),
      ['[redacted: removed as a secret by a correction]\n\n[redacted: removed as a secret by a correction]\n'],
    );

    const rules = await core.spaces.rules(owner, { space_id: 'proj' });
    const first = await core.revisions.updateRules(owner, { space_id: 'proj', rules: `${rules.rules}\n- vault: ${SECRET}\n`, if_match: rules.version });
    await core.revisions.updateRules(owner, { space_id: 'proj', rules: rules.rules, if_match: first.version, secret: true });
    // The first change of the rules keeps the rules before it (no secret in them); the second, the rules without the secret.
    assert.deepEqual(await keptElsewhere(storage), []);
  });

  it('without it, the earlier text is kept whole (what bank_revert needs)', async () => {
    const { core, storage } = await setup();
    await core.revisions.write(owner, { space_id: 'proj', filename: 'infra.md', content: `# Infra\n\n${SECRET}\n` });
    const read = await core.bank.read(owner, { space_id: 'proj', filename: 'infra.md' });
    await core.revisions.write(owner, { space_id: 'proj', filename: 'infra.md', content: '# Infra\n\nnothing\n', if_match: read.version });
    assert.equal((await keptElsewhere(storage)).length, 1);
  });
});

describe('the synthesis, corrected as a bank file (_synthesis.md)', () => {
  it('read with its version, written whole or by section, reverted, deleted; the next consolidation reads the correction', async () => {
    const { core, storage, server } = await setup([
      { reply: plan([rewrite('progress.md', '# Progress\n\n- one\n')], `# Synthesis\n\n## Infra\n\nThe cache password is ${SECRET}.\n`) },
    ]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one' });
    const consolidated = (await core.consolidation.consolidate(owner, { space_id: 'proj' })).consolidations?.[0] as string;
    const read = await core.bank.read(owner, { space_id: 'proj', filename: '_synthesis.md' });
    assert.match(read.content, new RegExp(SECRET));
    assert.match(JSON.stringify((await core.history.read(owner, { space_id: 'proj', consolidation_id: consolidated })).consolidation), new RegExp(SECRET));

    const edited = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: '_synthesis.md',
      edits: [{ op: 'replace', section: 'Synthesis > Infra', content: 'The cache has a password (in the vault).' }],
      if_match: read.version,
      secret: true,
    });
    const now = await storage.get('proj/_synthesis.md');
    assert.equal(now?.body.toString('utf8'), '# Synthesis\n\n## Infra\n\nThe cache has a password (in the vault).\n');
    assert.equal(await storage.get('proj/bank/_synthesis.md'), null, 'no bank file of that name');
    assert.deepEqual(
      (await core.bank.list(owner, { space_id: 'proj' })).files.map((f) => f.filename),
      ['progress.md'],
    );
    assert.deepEqual(await keptElsewhere(storage), []);
    // The consolidation's record kept a copy of the synthesis it wrote: this process had read (cached) it, and shows it gone.
    const history = await core.history.read(owner, { space_id: 'proj', consolidation_id: consolidated });
    const record = history.consolidation as unknown as Record<string, unknown>;
    assert.equal(record.synthesis, undefined);
    assert.deepEqual(record.synthesis_removed, { revision_id: edited.revision_id, at: (record.synthesis_removed as { at: string }).at });
    const listed = await core.history.list(owner, { space_id: 'proj' });
    assert.deepEqual(listed.consolidations[0]?.bank_files, [{ filename: '_synthesis.md', kind: 'updated' }]);

    // A stale version is refused; a revert puts back the earlier text (but for the secret).
    await assert.rejects(core.revisions.write(owner, { space_id: 'proj', filename: '_synthesis.md', content: 'x', if_match: read.version }), (error) =>
      isLiveMemError(error, 'conflict'),
    );
    await core.revisions.revert(owner, { space_id: 'proj', revision_id: edited.revision_id, confirm: true });
    assert.equal(
      (await storage.get('proj/_synthesis.md'))?.body.toString('utf8'),
      '# Synthesis\n\n## Infra\n\n[redacted: removed as a secret by a correction]\n',
    );

    const deleted = await core.revisions.delete(owner, { space_id: 'proj', filename: '_synthesis.md', confirm: true });
    assert.equal(await storage.get('proj/_synthesis.md'), null);
    await core.revisions.revert(owner, { space_id: 'proj', revision_id: deleted.revision_id, confirm: true });
    const back = await core.bank.read(owner, { space_id: 'proj', filename: '_synthesis.md' });
    const fixed = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: '_synthesis.md',
      content: 'The team ships nightly.\n',
      if_match: back.version,
    });
    assert.equal(fixed.status, 'ok');

    // The next consolidation is given the corrected synthesis.
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'two' });
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    const prompt =
      server.requests
        .at(-1)
        ?.messages.map((m) => m.content)
        .join('\n') ?? '';
    assert.match(prompt, /The team ships nightly\./);
  });

  it('is no name a bank file may take', async () => {
    const { core } = await setup();
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: '_synthesis.md', content: 'x', if_match: 'nope' }),
      (error) => isLiveMemError(error, 'conflict'),
      'the synthesis does not exist yet: an if_match is a conflict, as for a bank file',
    );
    const created = await core.revisions.write(owner, { space_id: 'proj', filename: '_synthesis.md', content: 'A first synthesis.\n' });
    assert.equal(created.status, 'created');
    assert.equal((await core.spaces.summary(owner, { space_id: 'proj' })).synthesis, 'A first synthesis.\n');
  });
});
