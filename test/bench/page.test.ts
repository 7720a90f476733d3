import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPage, checked, PAGE_END, PAGE_START, retrievalSection, splicePage } from '../../scripts/bench-page.js';
import type { LocomoRun } from '../../scripts/bench-locomo.js';

/**
 * The benchmark page's command (scripts/bench-page.ts, `npm run bench:page`) at its small size: the
 * shortest LoCoMo conversation of each split, every figure of the page computed. A figure it prints that
 * cannot be computed (NaN, missing, no question asked) fails here before it reaches the page.
 */
describe('the benchmark page', () => {
  it('refuses a figure it cannot compute', () => {
    assert.equal(checked('x', 0.5), '0.500');
    assert.equal(checked('notes', 369, 0), '369');
    assert.equal(checked('recall', 1), '1.000');
    assert.throws(() => checked('recall', Number.NaN), /recall cannot be computed \(NaN\)/);
    assert.throws(() => checked('p50', undefined), /p50 cannot be computed/);
    assert.throws(() => checked('flags', null), /flags cannot be computed/);
    const empty = { split: 'dev', conversations: [], results: [] } as unknown as LocomoRun;
    assert.throws(() => retrievalSection('empty', empty, { start: 0, end: 0 }, 0), /the dev split asked no question/);
  });

  it('goes between its markers in docs/benchmarks.md, or at the end', () => {
    const page = `${PAGE_START}\nnew\n${PAGE_END}`;
    assert.equal(splicePage(`# B\n\ntext\n\n${PAGE_START}\nold\n${PAGE_END}\n`, page), `# B\n\ntext\n\n${page}\n`);
    assert.equal(splicePage('# B\n', page), `# B\n\n${page}\n`);
  });

  it('computes every figure of the page on one conversation per split', { timeout: 120_000 }, async () => {
    const page = await buildPage({ small: true });
    assert.ok(page.startsWith(PAGE_START) && page.endsWith(PAGE_END));
    assert.doesNotMatch(page, /NaN|undefined|Infinity|n\/a/);
    for (const heading of [
      'LoCoMo retrieval, development conversations',
      'LoCoMo retrieval, held-out conversations',
      'Retention check, development conversations (30)',
      'Retention check, held-out conversations (49)',
    ])
      assert.ok(page.includes(`\n### ${heading}`), heading);
    // Each split: the nine retrieval rows with three rankers' figures and the load.
    const rows = page.split('\n').filter((line) => /^\| (turn|session) /.test(line));
    assert.equal(rows.length, 2 * 9);
    for (const row of rows) assert.match(row, /^\| [^|]+ \| \d\.\d{3} \| \d\.\d{3} \| \d\.\d{3} \| \d+\.\d → \d+\.\d \| \S/);
    assert.match(page, /conversations 30: 369 turns in 19 sessions, 81 questions of categories 1–4/);
    assert.match(page, /conversations 49: 509 turns in 25 sessions, 156 questions of categories 1–4/);
    // The retention figures, each with its load and what it does not show.
    assert.equal(page.split('\n').filter((line) => /^\| (retention|recall:|precision|share of notes|kept notes|check per window)/.test(line)).length, 2 * 8);
  });
});
