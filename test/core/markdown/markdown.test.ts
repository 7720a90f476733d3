import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitSections } from '../../../src/core/compaction/sections.js';
import { applySectionEdit, type SectionEdit, sectionSpan } from '../../../src/core/markdown/edit.js';
import { outlineOf } from '../../../src/core/markdown/outline.js';
import { bankSections } from '../../../src/core/markdown/sections.js';
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
      outlineOf(DOC).headings.map((h) => [h.depth, h.text]),
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

describe('markdown sections: line endings other than \\n', () => {
  const variants = { crlf: DOC.replace(/\n/g, '\r\n'), cr: DOC.replace(/\n/g, '\r'), bom: `\uFEFF${DOC.replace(/\n/g, '\r\n')}` };
  for (const [name, text] of Object.entries(variants)) {
    it(`reads a ${name} document as the same outline, and edits it into \\n text (before: "lexer lost characters")`, () => {
      assert.deepEqual(outlineOf(text).headings, outlineOf(DOC).headings);
      assert.equal(outlineOf(text).text, DOC);
      const edits: SectionEdit[] = [
        { op: 'append', path: ['Done'], content: '- export\r\n- import' },
        { op: 'replace', path: ['Progress', 'Todo'], content: 'x' },
        { op: 'delete', path: ['Done'] },
        { op: 'add', path: ['Progress'], title: 'Blocked', content: 'n' },
      ];
      for (const edit of edits) {
        assert.equal(applySectionEdit(text, edit, 'p.md'), applySectionEdit(DOC, edit, 'p.md'));
      }
      assert.doesNotMatch(applySectionEdit(text, { op: 'prepend', path: ['Todo'], content: 'a\r\nb\rc' }, 'p.md'), /\r|\uFEFF/);
      assert.deepEqual(sectionSpan(text, ['Todo']), sectionSpan(DOC, ['Todo']));
      assert.deepEqual(
        bankSections('p.md', text).map((s) => [s.path, s.start, s.end]),
        bankSections('p.md', DOC).map((s) => [s.path, s.start, s.end]),
      );
      assert.equal(splitSections('p.md', text, 1000).content, DOC);
    });
  }
});

describe('markdown sections: a file of 10,000 headings', () => {
  // Nested three deep, as a long log grows: every section's end is found in one pass (the figure is `npm run bench -- --only 22`).
  const headings = Array.from({ length: 10_000 }, (_, i) => `${'#'.repeat(1 + (i % 3))} Heading ${i}\n`);
  const file = headings.join('');

  it('outlines it: every heading, its path, and its section up to the next heading of its level or higher', () => {
    const { text, headings: found } = outlineOf(file);
    assert.equal(text, file);
    assert.equal(found.length, 10_000);
    assert.deepEqual(found[4]?.path, ['Heading 3', 'Heading 4']);
    assert.deepEqual(found[5]?.path, ['Heading 3', 'Heading 4', 'Heading 5']);
    for (const [i, heading] of found.entries()) {
      const next = found.slice(i + 1, i + 4).find((h) => h.depth <= heading.depth);
      assert.equal(heading.end, next ? next.start : file.length, `section ${i}`);
    }
  });

  it('cuts it into 10,000 search sections and 0 compaction sections (no body), which put back together are the file', () => {
    const sections = bankSections('log.md', file);
    assert.equal(sections.length, 10_000);
    assert.equal(sections.map((s) => file.slice(s.start, s.end)).join(''), file);
    assert.deepEqual(sections.at(-1)?.path, ['Heading 9999']);
    assert.equal(splitSections('log.md', file, 1000).sections.length, 0);
    const withBodies = headings.map((h, i) => `${h}\nentry ${i}\n\n`).join('');
    const split = splitSections('log.md', withBodies, 1000).sections;
    assert.equal(split.length, 10_000);
    assert.equal(split.map((s) => s.text).join(''), withBodies);
  });

  it('edits its last section and its first, the rest kept byte for byte', () => {
    const appended = applySectionEdit(file, { op: 'append', path: ['Heading 9999'], content: '- the last' }, 'log.md');
    assert.equal(appended, `${file.slice(0, file.lastIndexOf('# Heading 9999') - 0)}# Heading 9999\n\n- the last\n`);
    const replaced = applySectionEdit(file, { op: 'replace', path: ['Heading 0', 'Heading 1', 'Heading 2'], content: 'body' }, 'log.md');
    assert.equal(replaced, file.replace('### Heading 2\n', '### Heading 2\n\nbody\n\n'));
  });
});

describe('markdown sections: an edit never hides sections it does not name', () => {
  const JOURNAL = '# Journal\n\n## Log\n\n- started\n\n## Decisions\n\n- Postgres\n\n## Next\n\n- backups\n';

  it('refuses an append that opens a code fence and never closes it (the outline would go from Log, Decisions, Next to Log)', () => {
    assert.throws(
      () => applySectionEdit(JOURNAL, { op: 'append', path: ['Journal', 'Log'], content: '```sh\nnpm test' }, 'journal.md'),
      (e) =>
        isLiveMemError(e, 'invalid_input') &&
        /journal\.md: the edit \(append "Journal > Log"\) hides 2 section\(s\): "Journal > Decisions", "Journal > Next"/.test(e.message),
    );
    assert.throws(
      () => applySectionEdit(JOURNAL, { op: 'prepend', path: ['Decisions'], content: '~~~\nraw' }, 'journal.md'),
      /hides 1 section.*"Journal > Next"/,
    );
    assert.throws(() => applySectionEdit(JOURNAL, { op: 'replace', path: ['Log'], content: '<pre>\nraw' }, 'journal.md'), /hides 2 section/);
    assert.throws(
      () => applySectionEdit(JOURNAL, { op: 'add', path: ['Journal'], title: 'Ideas', content: '```\nopen' }, 'journal.md'),
      (e) => isLiveMemError(e, 'invalid_input') && /the edit \(add "Ideas" under "Journal"\) leaves a code fence open at the end/.test(e.message),
    );
  });

  it('refuses an add whose heading lands inside a code block the file already leaves open', () => {
    const open = `${JOURNAL}\n\`\`\`sh\nnpm test\n`;
    assert.throws(
      () => applySectionEdit(open, { op: 'add', path: [], title: 'Ideas', content: 'x' }, 'journal.md'),
      (e) => isLiveMemError(e, 'invalid_input') && /leaves no section "Ideas": its heading ends up inside a code block/.test(e.message),
    );
  });

  it('still deletes a section, replaces one with its sub-sections, and closes fences: only what the edit names goes', () => {
    assert.doesNotMatch(applySectionEdit(JOURNAL, { op: 'delete', path: ['Decisions'] }, 'journal.md'), /Decisions/);
    assert.deepEqual(
      outlineOf(applySectionEdit(DOC, { op: 'replace', path: ['Done'], content: 'flat' }, 'p.md')).headings.map((h) => h.text),
      ['Progress', 'Done', 'Todo'],
    );
    const fenced = applySectionEdit(JOURNAL, { op: 'append', path: ['Log'], content: '```sh\nnpm test\n```' }, 'journal.md');
    assert.deepEqual(
      outlineOf(fenced).headings.map((h) => h.text),
      ['Journal', 'Log', 'Decisions', 'Next'],
    );
  });
});
