/**
 * Plans a model should never be able to slip through: bank file names no system can hold (too long
 * in bytes, Windows device names and characters, Unicode twins, case twins), a flood of new files;
 * and what a run says when it fails after its commit point.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { plan, rewrite, scenarios } from '../../../fixtures/llm/scenarios.js';
import type { ConsolidationSettings } from '../../../src/core/context.js';
import { createCore } from '../../../src/core/core.js';
import { LiveMemError } from '../../../src/shared/errors.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { historyNoteNames, owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';
import { tempDir } from '../../helpers/tmp.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function setup(steps: Step[], storage: StorageDriver = createMemoryDriver(), consolidation: Partial<ConsolidationSettings> = {}, notes = 4) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const core = createCore({
    storage,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000, ...consolidation },
  });
  if (!(await storage.stat('proj/_meta.json'))) await core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < notes; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
  return { core, storage, server };
}

const liveCount = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md')).length;
const bankNames = async (storage: StorageDriver) =>
  (await listKeys(storage, 'proj/bank/')).map((key) => key.slice('proj/bank/'.length)).filter((name) => name.endsWith('.md'));
const one = (filename: string) => [{ reply: plan([rewrite(filename, `# ${filename}\n\nFrom the notes.\n`)]) }];

/** A refused plan: invalid_input, nothing written, every note still in live/, the space usable at once. */
async function assertRefused(storage: StorageDriver, result: { status: string; code?: unknown; message?: string }, pattern: RegExp): Promise<void> {
  assert.equal(result.status, 'error', result.message);
  assert.equal(result.code, 'invalid_input');
  assert.match(result.message ?? '', pattern);
  assert.match(result.message ?? '', /nothing was changed$/);
  assert.equal(await liveCount(storage), 4);
  assert.deepEqual(await bankNames(storage), []);
  assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
  assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
}

describe('consolidation: bank file names every system can hold', () => {
  it('refuses a name of 255 characters (252 × a + .md): no room for the temp name', async () => {
    const { core, storage } = await setup(one(`${'a'.repeat(252)}.md`));
    await assertRefused(storage, await core.consolidation.consolidate(owner, { space_id: 'proj' }), /unsafe file .*255 bytes in UTF-8, more than the 215/);
  });

  it('refuses 130 × é on the fs driver (263 bytes: ENAMETOOLONG for real), and the space stays usable', async () => {
    const home = await tempDir();
    try {
      const storage = createFsDriver(home.dir);
      const { core } = await setup(one(`${'é'.repeat(130)}.md`), storage);
      await assertRefused(storage, await core.consolidation.consolidate(owner, { space_id: 'proj' }), /263 bytes in UTF-8/);
      const { core: next } = await setup(one(`${'é'.repeat(100)}.md`), storage, {}, 0);
      const result = await next.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'ok', result.message);
      assert.deepEqual(await bankNames(storage), [`${'é'.repeat(100)}.md`]);
      assert.equal(await liveCount(storage), 0);
      await storage.close?.();
    } finally {
      await home.remove();
    }
  });

  for (const [name, pattern] of [
    ['CON.md', /device name on Windows/],
    ['lpt1.notes.md', /device name on Windows/],
    ['x:y.md', /Windows refuses the characters/],
    ['what?.md', /Windows refuses the characters/],
  ] as const) {
    it(`refuses ${name}, which Windows cannot hold`, async () => {
      const { core, storage } = await setup(one(name));
      await assertRefused(storage, await core.consolidation.consolidate(owner, { space_id: 'proj' }), pattern);
    });
  }

  it('takes café.md composed and decomposed as one file (NFC)', async () => {
    const composed = 'caf\u00e9.md';
    const decomposed = 'cafe\u0301.md';
    const storage = createMemoryDriver();
    const { core } = await setup([{ reply: plan([rewrite(decomposed, '# Café\n\nFirst.\n')]) }], storage);
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).bank_files_created, 1);
    assert.deepEqual(await bankNames(storage), [composed], 'stored in NFC');
    const { core: next } = await setup([{ reply: plan([rewrite(composed, '# Café\n\nSecond.\n')]) }], storage);
    const second = await next.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(second.status, 'ok', second.message);
    assert.deepEqual([second.bank_files_created, second.bank_files_updated], [0, 1]);
    assert.deepEqual(await bankNames(storage), [composed]);
  });

  it('refuses a new name that differs from an existing file only by case (one file on macOS and Windows)', async () => {
    const storage = createMemoryDriver();
    await (await setup(scenarios.validPlan, storage, {}, 1)).core.consolidation.consolidate(owner, { space_id: 'proj' });
    const before = await bankNames(storage);
    const { core } = await setup(one('Progress.md'), storage, {}, 1);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.code, 'invalid_input');
    assert.match(result.message ?? '', /"Progress\.md" beside "progress\.md": they differ only by case/);
    assert.deepEqual(await bankNames(storage), before);
  });
});

describe('consolidation: the bank cannot be flooded', () => {
  it('refuses a plan creating 2,000 files whole', async () => {
    const files = Array.from({ length: 2_000 }, (_, i) => rewrite(`topic-${i}.md`, `# Topic ${i}\n\nA fact.\n`));
    const { core, storage } = await setup([{ reply: plan(files) }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    await assertRefused(storage, result, /creates 2000 bank files; one consolidation may create at most 20 \(LIVE_MEM_CONSOLIDATION_MAX_NEW_FILES\)/);
    // Refused, asked once more with the reason, refused again: both plans' operations failed.
    assert.equal(result.operations_failed, 4_000);
  });

  it('refuses a plan that would take the bank past its cap, and lets one that creates nothing through', async () => {
    const storage = createMemoryDriver();
    await (await setup(scenarios.validPlan, storage, {}, 1)).core.consolidation.consolidate(owner, { space_id: 'proj' });
    const { core } = await setup(
      // The model repeats the refused plan when told why (a run gives it two chances), then creates nothing.
      [
        { reply: plan([rewrite('a.md', '# A\n\nx\n'), rewrite('b.md', '# B\n\nx\n')]) },
        { reply: plan([rewrite('a.md', '# A\n\nx\n'), rewrite('b.md', '# B\n\nx\n')]) },
        { reply: plan([rewrite('activeContext.md', '# Active\n\nNow.\n')]) },
      ],
      storage,
      { maxBankFiles: 7 },
      1,
    );
    const refused = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(refused.code, 'invalid_input');
    assert.match(refused.message ?? '', /creates 2 bank files beside the 6 there are; the bank may hold at most 7 \(LIVE_MEM_BANK_MAX_FILES\)/);
    assert.equal((await bankNames(storage)).length, 6);
    const updated = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(updated.status, 'ok', updated.message);
  });
});

describe('consolidation: what a failed run says', () => {
  it('says "nothing was changed" once when the model gives no usable plan', async () => {
    const { core } = await setup(scenarios.invalidTwice);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.message?.match(/nothing was changed/g)?.length, 1, result.message);
  });

  it('after its commit point, says the consolidation is committed and how it is finished; the next run finishes it', async () => {
    // The store fails every bank write once the record is committed (a full disk, S3 down).
    const memory = createMemoryDriver();
    let failing = true;
    const storage: StorageDriver = Object.create(memory);
    storage.put = async (key, body, options) => {
      if (failing && key.startsWith('proj/bank/') && (await memory.stat('proj/_consolidation/pending.json'))) {
        throw new LiveMemError('storage_error', 'the disk is full (ENOSPC)', { key });
      }
      return memory.put(key, body, options);
    };
    const { core } = await setup(scenarios.validPlan, storage);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'partial');
    assert.equal(result.code, 'storage_error');
    assert.ok(result.pending);
    assert.equal(
      result.message,
      `the disk is full (ENOSPC); consolidation ${result.pending} is committed; its bank writes are not all applied yet: ` +
        "the next consolidation, backup or export of 'proj' finishes it, or `live-mem doctor proj --fix`",
    );
    assert.doesNotMatch(result.message ?? '', /nothing was changed/);

    // While the store still fails, a backup does not quarantine the record: it stays pending.
    await assert.rejects(core.backups.create(owner, { space_id: 'proj' }), /could not finish consolidation .* it stays pending/);
    assert.ok(await storage.stat('proj/_consolidation/pending.json'));
    assert.deepEqual(await listKeys(storage, 'proj/_consolidation/quarantine/'), []);

    failing = false;
    const next = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(next.status, 'ok', next.message);
    assert.equal(next.recovered, result.pending);
    assert.equal((await historyNoteNames(storage, 'proj')).length, 4, 'every note consolidated once');
    assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).consolidation_count, 1);
    assert.equal((await bankNames(storage)).length, 6);
  });
});
