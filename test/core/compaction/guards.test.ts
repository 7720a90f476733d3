import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkDigests,
  checkHeading,
  checkKeptVerbatim,
  checkKnownIds,
  checkProtected,
  checkShorter,
  checkSize,
  floorTokens,
  targetTokens,
  type Digest,
} from '../../../src/core/compaction/guards.js';
import { parseDigests } from '../../../src/core/compaction/prompt.js';
import { splitSections, type Section } from '../../../src/core/compaction/sections.js';
import { ReplyFormatError as PlanFormatError } from '../../../src/llm/reply-json.js';
import { digestOf, PROSE, progressFile } from '../../helpers/compaction.js';

const BUDGET = 1200;
const file = () => splitSections('progress.md', progressFile(20), BUDGET);
const offered = (section: Section) => ({ id: section.id, path: section.path, tokens: section.tokens, protected: section.protected, content: section.text });
/** The well-behaved digests: every unprotected section down to its heading and dated lines. */
const good = (sections: Section[]): Digest[] => sections.filter((s) => !s.protected).map((s) => ({ id: s.id, content: digestOf(offered(s)) }));
const refusedBy = (guard: string) => new RegExp(`refused by the ${guard} guard`);

describe('compaction sections', () => {
  it('cuts a file into its headings’ own text, leaving heading-only headings out, and protects the newest and code', () => {
    const split = splitSections('f.md', `intro\n\n# Top\n\n## Empty\n\n## A\n\nold\n\n## B\n\n\`\`\`sh\nmake\n\`\`\`\n\n## C\n\n${PROSE}\n`, 100);
    assert.deepEqual(
      split.sections.map((s) => [s.id, s.path.join(' > '), s.protected]),
      [
        ['s1', 'Top > A', false],
        ['s2', 'Top > B', true],
        ['s3', 'Top > C', true],
      ],
    );
    assert.deepEqual(split.sections[1]?.codeBlocks, ['make']);
    assert.equal(split.sections[0]?.text, '## A\n\nold\n\n');
  });

  it('protects the last section, then earlier ones while they hold at most 30% of the budget', () => {
    const split = file();
    const protectedOnes = split.sections.filter((s) => s.protected);
    assert.deepEqual(
      protectedOnes.map((s) => s.path.at(-1)),
      ['Entry 18', 'Entry 19'],
    );
    assert.ok(protectedOnes.reduce((sum, s) => sum + s.tokens, 0) <= BUDGET * 0.3);
    assert.equal(split.sections[0]?.path.join(' > '), 'Progress', 'the intro under the top heading is a section too');
  });
});

describe('compaction guards, one by one', () => {
  it('well-behaved digests pass every guard: within the budget, above the floor, dated lines and the newest entries kept', () => {
    const split = file();
    const result = checkDigests(split, good(split.sections));
    assert.ok(result.tokens <= targetTokens(BUDGET) && result.tokens >= floorTokens(split), String(result.tokens));
    for (let i = 0; i < 20; i++) assert.ok(result.content.includes(`shipped feature ${i}\n`), `entry ${i}'s dated line`);
    assert.ok(result.content.endsWith(split.sections.at(-1)?.text as string), 'the newest entry byte for byte');
    assert.ok(result.content.startsWith('# Progress\n'));
  });

  it('known ids: a section that was not offered, or one digested twice', () => {
    const split = file();
    assert.throws(() => checkKnownIds(split, [{ id: 's99', content: 'x' }]), refusedBy('known-ids'));
    assert.throws(
      () =>
        checkKnownIds(split, [
          { id: 's2', content: 'x' },
          { id: 's2', content: 'y' },
        ]),
      refusedBy('known-ids'),
    );
  });

  it('heading: a digest keeps its heading line (put back when left out) and adds none', () => {
    const split = file();
    const section = split.sections[3] as Section;
    assert.throws(() => checkHeading(split, section, '### Another\n\n- x'), refusedBy('heading'));
    assert.throws(() => checkHeading(split, section, `${section.heading.raw}\n- x\n\n#### Sub\n\ny`), refusedBy('heading'));
    assert.equal(checkHeading(split, section, '- x'), `${section.heading.raw.trim()}\n\n- x`);
  });

  it('shorter: a digest that grows its section', () => {
    const split = file();
    const section = split.sections[3] as Section;
    assert.throws(() => checkShorter(split, section, `${section.text.trim()} and more`), refusedBy('shorter'));
    assert.throws(() => checkDigests(split, [{ id: section.id, content: `${section.text} and more` }]), refusedBy('shorter'));
  });

  it('budget: a result still over the budget', () => {
    const split = file();
    assert.throws(() => checkDigests(split, good(split.sections).slice(0, 2)), refusedBy('budget'));
    assert.throws(() => checkSize(split, BUDGET + 1), refusedBy('budget'));
  });

  it('floor: a file compacted (almost) to nothing', () => {
    const split = file();
    const headingsOnly = split.sections.map((s) => ({ id: s.id, content: s.heading.raw }));
    assert.throws(() => checkDigests(split, headingsOnly), refusedBy('floor'));
    assert.throws(() => checkSize(split, floorTokens(split) - 1), refusedBy('floor'));
    assert.equal(
      floorTokens(split),
      Math.max(
        BUDGET / 4,
        split.sections.filter((s) => s.protected).reduce((n, s) => n + s.tokens, 0),
      ),
    );
  });

  it('floor: at most half the budget, so a file that is one big newest section can still be digested', () => {
    const split = splitSections('one.md', `# One\n\n${PROSE.repeat(30)}\n`, 400);
    assert.equal(split.sections.length, 1);
    assert.equal(floorTokens(split), 200);
    const only = split.sections[0] as Section;
    const result = checkDigests(split, [{ id: only.id, content: `# One\n\n${PROSE.repeat(8)}` }]);
    assert.ok(result.tokens >= 200 && result.tokens <= 300, String(result.tokens));
  });

  it('protected: the newest entry digested while the older ones free enough', () => {
    const split = file();
    const newest = split.sections.at(-1) as Section;
    const digests = [...good(split.sections), { id: newest.id, content: digestOf(offered(newest)) }];
    assert.throws(() => checkDigests(split, digests), refusedBy('protected'));
  });

  it('protected: allowed when the target cannot be met otherwise', () => {
    const split = splitSections('log.md', `# Log\n\n## Old\n\nshort\n\n## New\n\n${PROSE.repeat(30)}\n`, 400);
    const newest = split.sections.at(-1) as Section;
    assert.equal(newest.protected, true);
    const text = `## New\n\n${PROSE.repeat(10)}`;
    assert.doesNotThrow(() => checkProtected(split, [{ section: newest, text }], 290));
    const roomy = file();
    const last = roomy.sections.at(-1) as Section;
    assert.throws(() => checkProtected(roomy, [{ section: last, text: '### Entry 19' }], 500), refusedBy('protected'));
  });

  it('verbatim: a dated line dropped while the file has room to keep it; allowed at the target', () => {
    const split = file();
    const digests = good(split.sections);
    const second = digests[1] as Digest;
    second.content = second.content.replace(/\n- 2026-.*$/m, '\n- shipped a feature');
    assert.throws(() => checkDigests(split, digests), refusedBy('verbatim'));
    const section = split.sections[1] as Section;
    const dropped = [{ section, text: '### Entry 0\n\n- shipped a feature' }];
    assert.throws(() => checkKeptVerbatim(split, dropped, 500), refusedBy('verbatim'));
    assert.doesNotThrow(() => checkKeptVerbatim(split, dropped, targetTokens(BUDGET) - 2));
  });

  it('verbatim: a code block dropped from its digest', () => {
    const code = '```ts\nconst answer = 42;\n```';
    const split = splitSections('c.md', `# C\n\n## Old\n\n${PROSE.repeat(12)}\n${code}\n\n## New\n\nnew\n`, 300);
    const old = split.sections[0] as Section;
    assert.deepEqual(old.codeBlocks, ['const answer = 42;']);
    assert.throws(() => checkKeptVerbatim(split, [{ section: old, text: '## Old\n\nshort' }], 50), refusedBy('verbatim'));
    assert.doesNotThrow(() => checkKeptVerbatim(split, [{ section: old, text: `## Old\n\nshort\n\n${code}` }], 50));
  });

  it('the reply: invalid JSON, or not a digests list, is a format error (asked again once)', () => {
    assert.throws(() => parseDigests('not json'), PlanFormatError);
    assert.throws(() => parseDigests('{"digests": "no"}'), PlanFormatError);
    assert.throws(() => parseDigests('{"digests": [{"id": 1}]}'), PlanFormatError);
    assert.deepEqual(parseDigests('```json\n{"digests":[{"id":"s1","content":"x"}]}\n```'), [{ id: 's1', content: 'x' }]);
  });
});
