import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applySectionEdit, headingsOf } from '../../../src/core/consolidation/markdown.js';
import { isLiveMemError } from '../../../src/shared/errors.js';

const DOC = `# Progress

Intro.

## Done

- auth

\`\`\`md
# not a heading
## nor this
\`\`\`

### Details

Deep.

## Todo

- backup
`;

describe('markdown sections', () => {
  it('finds headings, ignoring code fences', () => {
    assert.deepEqual(
      headingsOf(DOC).map((h) => [h.depth, h.text]),
      [
        [1, 'Progress'],
        [2, 'Done'],
        [3, 'Details'],
        [2, 'Todo'],
      ],
    );
  });

  it('replaces a section body, up to the next heading of the same level', () => {
    const out = applySectionEdit(DOC, { op: 'replace', path: ['Progress', 'Done'], content: '- auth\n- export' }, 'p.md');
    assert.equal(out, '# Progress\n\nIntro.\n\n## Done\n\n- auth\n- export\n\n## Todo\n\n- backup\n');
  });

  it('appends at the end of a section, after its subsections', () => {
    const out = applySectionEdit(DOC, { op: 'append', path: ['Done'], content: '- export' }, 'p.md');
    assert.match(out, /Deep\.\n\n- export\n\n## Todo/);
  });

  it('prepends right after the heading', () => {
    const out = applySectionEdit(DOC, { op: 'prepend', path: ['Todo'], content: '- first' }, 'p.md');
    assert.match(out, /## Todo\n\n- first\n\n- backup\n$/);
  });

  it('adds a section under a parent, or at the top level', () => {
    const nested = applySectionEdit(DOC, { op: 'add', path: ['Progress'], title: 'Blocked', content: '- nothing' }, 'p.md');
    assert.match(nested, /- backup\n\n## Blocked\n\n- nothing\n$/);
    const under = applySectionEdit(DOC, { op: 'add', path: ['Done'], title: 'Notes', content: 'n' }, 'p.md');
    assert.match(under, /Deep\.\n\n### Notes\n\nn\n\n## Todo/);
  });

  it('deletes a section with its subsections', () => {
    const out = applySectionEdit(DOC, { op: 'delete', path: ['Done'] }, 'p.md');
    assert.equal(out, '# Progress\n\nIntro.\n\n## Todo\n\n- backup\n');
  });

  it('matches headings case- and space-insensitively, and fails on a missing one', () => {
    assert.match(applySectionEdit(DOC, { op: 'replace', path: ['  todo '], content: 'x' }, 'p.md'), /## Todo\n\nx\n$/);
    assert.throws(
      () => applySectionEdit(DOC, { op: 'replace', path: ['Nope'], content: 'x' }, 'p.md'),
      (e) => isLiveMemError(e, 'invalid_input') && /no section "Nope"/.test(e.message),
    );
    assert.throws(() => applySectionEdit(DOC, { op: 'replace', path: ['Todo', 'Details'], content: 'x' }, 'p.md'), /missing "Details"/);
    assert.throws(() => applySectionEdit(DOC, { op: 'replace', path: ['not a heading'], content: 'x' }, 'p.md'), /no section/);
  });
});
