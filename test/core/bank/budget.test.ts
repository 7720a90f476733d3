import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { counting, owner } from '../../helpers/core.js';

const RULES = ['# Rules', '', 'Bank budget: 900 tokens', '', '### progress.md', 'History. Budget: 500 tokens', '### notes.md', 'Anything.'].join('\n');

/** A space whose rules give progress.md and the bank their own budgets; notes.md takes the setting's. */
async function spaceWithBank(options: { rules?: string } = {}) {
  const storage = counting(createMemoryDriver());
  const core = createCore({ storage, budgets: { fileTokens: 300, bankTokens: 2_000 } });
  await core.spaces.create(owner, { space_id: 'b', rules: options.rules ?? RULES });
  // 350 and 700 characters: 100 and 200 tokens at 3.5 characters a token; é is one character, two bytes.
  await storage.put('b/bank/notes.md', 'é'.repeat(350));
  await storage.put('b/bank/progress.md', 'x'.repeat(700));
  return { core, storage };
}

describe('bank budgets, measured', () => {
  it('bank_list gives each file its tokens against its budget, the rules before the settings, and the bank total', async () => {
    const { core } = await spaceWithBank();
    const list = await core.bank.list(owner, { space_id: 'b' });
    assert.deepEqual(
      list.files.map(({ filename, size, tokens, budget_tokens, over_budget }) => ({ filename, size, tokens, budget_tokens, over_budget })),
      [
        { filename: 'notes.md', size: 700, tokens: 100, budget_tokens: 300, over_budget: false },
        { filename: 'progress.md', size: 700, tokens: 200, budget_tokens: 500, over_budget: false },
      ],
    );
    assert.equal(list.total_tokens, 300);
    assert.equal(list.budget_tokens, 900, "the rules' bank budget wins over the setting");
    assert.equal(list.over_budget, false);
    assert.ok(list.files.every((file) => typeof file.last_modified === 'string'));
  });

  it('flags a file and a bank over budget, and falls back to the settings when the rules say nothing', async () => {
    const { core, storage } = await spaceWithBank({ rules: '# Rules\n\n### notes.md\nAnything.\n' });
    await storage.put('b/bank/notes.md', 'y'.repeat(3_500)); // 1,000 tokens, over the setting's 300
    await storage.put('b/bank/big.md', 'z'.repeat(3_850)); // 1,100 tokens: the bank, 2,300, is over 2,000
    const list = await core.bank.list(owner, { space_id: 'b' });
    assert.deepEqual(
      list.files.map((file) => [file.filename, file.tokens, file.budget_tokens, file.over_budget]),
      [
        ['big.md', 1_100, 300, true],
        ['notes.md', 1_000, 300, true],
        ['progress.md', 200, 300, false],
      ],
    );
    assert.deepEqual([list.total_tokens, list.budget_tokens, list.over_budget], [2_300, 2_000, true]);
  });

  it('space_info and space_summary carry the same measure; the summary reads the bank once', async () => {
    const { core, storage } = await spaceWithBank();
    await storage.put('b/bank/progress.md', 'x'.repeat(2_100)); // 600 tokens, over its 500
    const expected = {
      total_tokens: 700,
      budget_tokens: 900,
      over_budget: false,
      file_budgets: [
        { filename: 'notes.md', tokens: 100, budget_tokens: 300, over_budget: false },
        { filename: 'progress.md', tokens: 600, budget_tokens: 500, over_budget: true },
      ],
    };
    const info = await core.spaces.info(owner, { space_id: 'b' });
    assert.deepEqual(info.bank.files, ['notes.md', 'progress.md'], 'the names stay as the Python server gave them');
    const { files_count, total_size, files: _, ...measure } = info.bank;
    assert.deepEqual(measure, expected);
    assert.deepEqual([files_count, total_size], [2, 2_800]);
    storage.reset();
    const summary = await core.spaces.summary(owner, { space_id: 'b' });
    const { files_count: _c, total_size: _s, files: _f, ...summarised } = summary.bank;
    assert.deepEqual(summarised, expected);
    assert.equal(summary.files.length, 2);
    const bankReads = storage.counts.get ?? 0;
    // Two bank files, the rules for the budgets and for the summary, the synthesis, the meta: the bank is read once.
    assert.ok(bankReads <= 6, `${bankReads} gets`);
  });

  it('measures an empty bank as nothing against its budget', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'e' });
    const list = await core.bank.list(owner, { space_id: 'e' });
    assert.deepEqual([list.files, list.total_tokens, list.budget_tokens, list.over_budget], [[], 0, 16_000, false]);
    const info = await core.spaces.info(owner, { space_id: 'e' });
    assert.deepEqual(info.bank.file_budgets, []);
  });
});
