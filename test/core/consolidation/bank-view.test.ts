import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { viewBankFile } from '../../../src/core/consolidation/bank-view.js';
import { estimateTokens } from '../../../src/core/tokens.js';
import { bm25Engine } from '../../../src/search/bm25.js';

const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `- ${prefix} line ${i}`).join('\n');

describe('bank view of a file over its allowance', () => {
  it('cuts a last section too large for half the allowance to its end, and counts it as unseen', () => {
    const content = `# Progress\n\nThe log.\n\n## Done\n\n${lines('done', 400)}\n`;
    const view = viewBankFile('progress.md', content, 400, [], bm25Engine);
    assert.match(view.text, /^# Progress\n\nThe log\.\n\n## Done\n\[… elided start of this section: \d+ tokens, not shown …\]\n- done line \d+\n/);
    assert.ok(view.text.endsWith('- done line 399\n'), 'the end, where appends land');
    assert.ok(estimateTokens(view.text) <= 400, `${estimateTokens(view.text)} tokens`);
    assert.deepEqual(
      view.partial?.elided.map((s) => s.path),
      [['Progress', 'Done']],
    );
  });

  it('collapses runs of deep elided sections past 150, keeping the two outer heading levels', () => {
    const weeks = Array.from(
      { length: 20 },
      (_, w) => `## Week ${w}\n\n${Array.from({ length: 10 }, (_, d) => `### Day ${w}.${d}\n\n${lines(`w${w}d${d}`, 3)}\n`).join('\n')}`,
    );
    const content = `# Journal\n\nDaily.\n\n${weeks.join('\n')}`;
    const view = viewBankFile('journal.md', content, 300, [], bm25Engine);
    assert.equal(view.partial?.total, 221);
    assert.match(
      view.text,
      /## Week 3\n\[… elided section: \d+ tokens, not shown …\]\n\n\[… 10 deeper sections elided: \d+ tokens, not shown …\]\n\n## Week 4\n/,
    );
    assert.ok(!view.text.includes('### Day 3.4'));
    assert.ok(view.text.includes('### Day 19.9'), 'the last section is shown');
  });

  it('keeps both lines of an elided setext heading, so the outline still reads as headings', () => {
    const content = `Notes\n=====\n\nTop.\n\nOld\n---\n\n${lines('old', 80)}\n\nNew\n---\n\n- new\n`;
    const view = viewBankFile('notes.md', content, 100, [], bm25Engine);
    assert.match(view.text, /\n\nOld\n---\n\[… elided section: \d+ tokens, not shown …\]\n\nNew\n---\n\n- new\n$/);
  });
});
