import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bankBudget, DEFAULT_BUDGETS, withinBank } from '../../../src/core/bank/budget.js';
import { parseBankRules } from '../../../src/core/bank/rules.js';
import { DEFAULT_RULES } from '../../../src/core/space/default-rules.js';

describe('bank rules', () => {
  it('reads append-only files and budgets from the rules, per file and for the bank', () => {
    const rules = [
      '# Rules',
      '',
      'Bank budget: 20,000 tokens.',
      '',
      '## Files',
      '### progress.md',
      'History of the project. Append-only. Budget: 6 000 tokens',
      '### techContext.md',
      '**Budget:** 1500 tokens',
      '### activeContext.md',
      'Rewritten each time; no budget stated.',
      '```',
      '# not a heading.md',
      '```',
    ].join('\n');
    const parsed = parseBankRules(rules);
    assert.deepEqual([...parsed.appendOnly], ['progress.md']);
    assert.deepEqual(Object.fromEntries(parsed.fileBudgets), { 'progress.md': 6000, 'techContext.md': 1500 });
    assert.equal(parsed.bankBudget, 20_000);
    const budget = bankBudget(parsed, DEFAULT_BUDGETS);
    assert.equal(budget.bankTokens, 20_000);
    assert.equal(budget.fileTokens('progress.md'), 6000);
    assert.equal(budget.fileTokens('activeContext.md'), DEFAULT_BUDGETS.fileTokens);
  });

  it('gives the default rules the settings’ budgets, with progress.md append-only', () => {
    const parsed = parseBankRules(DEFAULT_RULES);
    assert.deepEqual([...parsed.appendOnly], ['progress.md']);
    const budget = bankBudget(parsed, { fileTokens: 1234, bankTokens: 5678 });
    assert.equal(budget.fileTokens('progress.md'), 1234);
    assert.equal(budget.bankTokens, 5678);
  });

  it('reads rules written with \\r\\n, \\r or a byte-order mark as the same rules (before: an unexpected error)', () => {
    const rules = [
      '# Rules',
      '',
      'Bank budget: 9,000 tokens.',
      '',
      '### progress.md',
      'Append-only. Budget: 600 tokens',
      '### activeContext.md',
      'Rewritten each time.',
      '',
    ];
    const plain = parseBankRules(rules.join('\n'));
    for (const text of [rules.join('\r\n'), rules.join('\r'), `\uFEFF${rules.join('\r\n')}`]) assert.deepEqual(parseBankRules(text), plain);
    assert.deepEqual([...plain.appendOnly], ['progress.md']);
    assert.deepEqual(Object.fromEntries(plain.fileBudgets), { 'progress.md': 600 });
    assert.equal(plain.bankBudget, 9_000);
  });

  it('reads which files are rewritten whole: activeContext.md in the default rules; not a file "never rewritten whole"', () => {
    assert.deepEqual([...parseBankRules(DEFAULT_RULES).rewrittenWhole], ['activeContext.md']);
    const parsed = parseBankRules(
      '### a.md\nRewritten whole.\n### b.md\nIs **rewritten at every** consolidation.\n### c.md\nNever rewritten whole: edit it.\n### d.md\nRewrite nothing.\n',
    );
    assert.deepEqual([...parsed.rewrittenWhole], ['a.md', 'b.md']);
  });

  it('ignores what is not a budget: zero, words, a budget line of one file read as another’s', () => {
    const parsed = parseBankRules('### a.md\nBudget: 0 tokens\n### b.md\nbudget: many tokens\n### c.md\nKeep the budget small.');
    assert.equal(parsed.fileBudgets.size, 0);
    assert.equal(parsed.bankBudget, undefined);
  });
});

describe('the bank budget over the file budgets', () => {
  const budget = bankBudget(parseBankRules('### a.md\nBudget: 300 tokens'), { fileTokens: 1000, bankTokens: 1000 });

  it('leaves every file its own budget while the bank is within its own', () => {
    const within = withinBank(
      budget,
      new Map([
        ['a.md', 250],
        ['b.md', 700],
      ]),
    );
    assert.equal(within.fileTokens('a.md'), 300);
    assert.equal(within.fileTokens('b.md'), 1000);
  });

  it('lowers the largest files to one level at which the bank fits, small files untouched', () => {
    const sizes = new Map([
      ['a.md', 250],
      ['b.md', 900],
      ['c.md', 600],
      ['d.md', 50],
    ]);
    const within = withinBank(budget, sizes);
    const level = within.fileTokens('b.md');
    assert.equal(level, within.fileTokens('c.md'));
    assert.equal(within.fileTokens('a.md'), 250 < level ? Math.min(300, level) : level);
    const fitted = [...sizes].reduce((sum, [name, size]) => sum + Math.min(size, within.fileTokens(name)), 0);
    assert.ok(fitted <= 1000 && fitted > 990, `the bank fits, barely: ${fitted}`);
    assert.equal(level, 350);
  });
});
