import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPlan } from '../../src/core/commit/apply-plan.js';
import { buildMessages, compressionMessages } from '../../src/core/consolidation/prompt.js';
import { parsePlan } from '../../src/core/consolidation/plan.js';
import { accountPlan } from '../../src/core/consolidation/provenance.js';
import { fenceJson } from '../../src/core/prompt-fence.js';
import { level1Messages } from '../../src/core/recall/summaries/prompt.js';
import { DEFAULT_RULES } from '../../src/core/space/default-rules.js';
import { estimateTokens } from '../../src/core/tokens.js';
import { idRanges, idsIn, keepDated, purposeOf, reply, summarize, type CompactionSection } from '../../scripts/bench-growth-model.js';

/**
 * The long-lived space benchmark's scripted model (scripts/bench-growth-model.ts): its plans must
 * apply on the real plan parser, and its compaction digests must keep what the guards of shared
 * design §3 protect, or the benchmark measures a model that breaks the rules.
 */
const note = (content: string, category: string) => ({ timestamp: '2026-11-24T10:00:00Z', agent: 'bench', category, tags: [], content });
const DAY1 = [
  note('2026-01-01 f0001: the zorvak service keeps its cache in bucket alpha.', 'observation'),
  note('2026-01-01 p0001: finished the zorvak migration.', 'progress'),
  note('2026-01-01 d0006: decided that zorvak shards by tenant.', 'decision'),
];
const DAY2 = [note('2026-01-02 f0002: the mivra queue holds ten shards.', 'observation'), note('2026-01-02 p0002: mivra tests pass.', 'progress')];

async function consolidate(bank: Map<string, string>, notes: ReturnType<typeof note>[]): Promise<Map<string, string>> {
  const messages = buildMessages({
    spaceId: 'growth',
    rules: DEFAULT_RULES,
    synthesis: '',
    consolidationNumber: bank.size === 0 ? 1 : 2,
    nonce: 'n0nce',
    notes,
    bank: [...bank].map(([filename, content]) => ({ filename, text: content })),
  });
  assert.equal(purposeOf(messages), 'consolidation');
  const files = new Map([...bank].map(([filename, content]) => [filename, { content, etag: 'e' }]));
  const plan = parsePlan(reply(messages));
  const applied = await applyPlan(plan, { files, appendOnly: new Set(['progress.md']) }, { maxNewFiles: 20, maxBankFiles: 200 });
  // It cites every note it folds in, so a run of the benchmark reports no note unaccounted for (and is not asked twice).
  const window = notes.map((_, i) => `n${i}.md`);
  const accounting = accountPlan(plan, window, (name) => (applied.writes.some((w) => w.filename === name) ? name : undefined));
  assert.deepEqual([accounting.unaccounted, accounting.unknown], [[], []]);
  const next = new Map(bank);
  for (const write of applied.writes) next.set(write.filename, write.content);
  return next;
}

describe('the growth benchmark’s scripted model', () => {
  it('creates the six files, then appends each note as a dated line to the section of its day', async () => {
    const first = await consolidate(new Map(), DAY1);
    assert.deepEqual([...first.keys()].sort(), [
      'activeContext.md',
      'productContext.md',
      'progress.md',
      'projectbrief.md',
      'systemPatterns.md',
      'techContext.md',
    ]);
    assert.match(first.get('techContext.md') ?? '', /^# Tech Context\n[\s\S]*## 2026-01-01\n\n- 2026-01-01: f0001: the zorvak service/m);
    assert.match(first.get('systemPatterns.md') ?? '', /- 2026-01-01: d0006: decided/);
    const second = await consolidate(first, [...DAY2, note('2026-01-01 p0003: late entry of the first day.', 'progress')]);
    const progress = second.get('progress.md') ?? '';
    assert.match(progress, /## 2026-01-01\n\n- 2026-01-01: p0001: finished the zorvak migration\.\n\n?- 2026-01-01: p0003: late entry/);
    assert.match(progress, /## 2026-01-02\n\n- 2026-01-02: p0002: mivra tests pass\./);
    assert.equal(second.get('projectbrief.md'), first.get('projectbrief.md'));
  });

  it('answers summaries and synthesis compression in the shape their prompts ask for', () => {
    const summary = JSON.parse(reply(level1Messages('growth', [{ ...note('x', 'progress'), text: 'one note' }])));
    assert.equal(typeof summary.summary, 'string');
    assert.ok(Array.isArray(summary.key_findings));
    const compressed = reply(compressionMessages('First sentence. Second one. Third one. Fourth.', 2, 'n0nce'));
    assert.equal(compressed, 'First sentence. Second one.');
  });

  it('writes id ranges per kind', () => {
    assert.equal(idRanges(['p0003', 'f0001', 'f0002', 'f0003', 'p0005', 'f0007']), 'f0001–f0003, f0007, p0003, p0005');
  });

  it('digests losslessly first: undated lines go, heading, dated lines and code blocks stay verbatim', () => {
    const section = '## Set-up\n\nSome prose about the set-up.\n- 2026-01-01: f0001: node 20\n\n```sh\nnpm ci\n```\nMore prose.\n';
    assert.equal(keepDated(section), '## Set-up\n\n- 2026-01-01: f0001: node 20\n\n```sh\nnpm ci\n```\n');
    assert.equal(
      summarize('## 2026-01-01\n\n- 2026-01-01: f0001: a\n- 2026-01-01: f0002: b\n'),
      '## 2026-01-01\n\n- 2026-01-01: 2 entries (f0001–f0002), full text in history.\n',
    );
  });

  const dateOf = (n: number) => new Date(Date.UTC(2026, 0, n)).toISOString().slice(0, 10);
  const day = (n: number, lines: number, prose = ''): string => {
    const date = dateOf(n);
    const entries = Array.from(
      { length: lines },
      (_, i) => `- ${date}: p${String(n * 100 + i).padStart(4, '0')}: ${'a long progress entry '.repeat(7 + (i % 3))}`,
    );
    return `## ${date}\n\n${prose}${entries.join('\n')}\n`;
  };

  /**
   * Asks the model to compact a file of these day sections and checks its digests against the
   * guards of shared design §3 as the compactor reads them ("cannot be met otherwise" against the
   * target; the floor the larger of a quarter of the budget and the protected part, at most the target).
   */
  function compact(contents: string[], budget: number, target: number, protectedFrom: number) {
    const preamble = '# Progress\n\nWhat works, what is left.\n\n';
    const file = preamble + contents.join('\n');
    const sections: CompactionSection[] = contents.map((content, i) => ({
      id: `s${i + 1}`,
      path: ['Progress', dateOf(i + 1)],
      tokens: estimateTokens(content),
      protected: i >= protectedFrom,
      content,
    }));
    const fileTokens = estimateTokens(file);
    const payload = { file: 'progress.md', budget_tokens: budget, target_tokens: target, file_tokens: fileTokens, sections };
    const messages = [
      { role: 'system', content: 'You compact one file of a memory bank.\nRewrite the oldest sections as digests.' },
      { role: 'user', content: `The file is ${fileTokens} tokens.\n${fenceJson('n0nce', 'compaction', 'progress.md', payload)}\nAnswer with JSON.` },
    ];
    assert.equal(purposeOf(messages), 'compaction');
    const digests = (JSON.parse(reply(messages)) as { digests: Array<{ id: string; content: string }> }).digests;
    const byId = new Map(sections.map((section) => [section.id, section]));
    const result =
      preamble +
      contents
        .map((content, i) => {
          const digest = digests.find((d) => d.id === `s${i + 1}`);
          return digest ? digest.content.trimEnd() + (/\s*$/.exec(content)?.[0] ?? '\n') : content;
        })
        .join('\n');
    const tokens = estimateTokens(result);
    const protectedTokens = sections.filter((s) => s.protected).reduce((sum, s) => sum + s.tokens, 0);
    assert.ok(tokens <= budget, `within the budget (${tokens} of ${budget})`);
    if (digests.length > 0) assert.ok(tokens >= Math.min(Math.max(budget / 4, protectedTokens), target), `not below the floor (${tokens})`);
    const datedOf = (text: string) =>
      text
        .split('\n')
        .slice(1)
        .map((line) => line.trim())
        .filter((line) => /\d{4}-\d{2}-\d{2}/.test(line));
    for (const digest of digests) {
      const section = byId.get(digest.id);
      assert.ok(section, `known id ${digest.id}`);
      assert.equal(digest.content.split('\n')[0], section.content.split('\n')[0], 'heading line kept');
      assert.ok(digest.content.trim().length < section.content.trim().length, 'each digest shorter than its section');
      const kept = new Set(digest.content.split('\n').map((line) => line.trim()));
      const named = new Set(idsIn(digest.content));
      for (const line of datedOf(section.content).filter((line) => !kept.has(line))) {
        assert.ok(tokens + estimateTokens(line) + 1 > target, `${digest.id} drops a dated line the target leaves room for (${tokens} tokens)`);
        for (const id of idsIn(line)) assert.ok(named.has(id), `${id}, dropped, is named in the digest`);
      }
    }
    const touched = digests.filter((d) => byId.get(d.id)?.protected);
    if (touched.length > 0) {
      const leastUnprotected = sections.filter((s) => !s.protected).reduce((sum, s) => sum + estimateTokens(keepDated(s.content)), 0);
      const unprotected = sections.filter((s) => !s.protected).reduce((sum, s) => sum + s.tokens, 0);
      assert.ok(fileTokens - unprotected + leastUnprotected > target, 'protected sections touched only when the others cannot meet the target');
    }
    return { digests, tokens, fileTokens };
  }

  it('drops only undated lines when that is enough, oldest sections first', () => {
    const prose = `${'Background prose that no date anchors. '.repeat(20)}\n`;
    const contents = [1, 2, 3, 4].map((n) => day(n, 3, prose));
    const total = estimateTokens(`# Progress\n\nWhat works, what is left.\n\n${contents.join('\n')}`);
    const { digests } = compact(contents, total - 50, total - 100, 3);
    assert.deepEqual(
      digests.map((d) => d.id),
      ['s1'],
    );
    assert.equal(digests[0]?.content, keepDated(contents[0] ?? ''));
  });

  it('folds the oldest dated lines into a line naming their ids when dropping undated lines cannot reach the target, and no further', () => {
    const contents = Array.from({ length: 10 }, (_, i) => day(i + 1, 10));
    const { digests, tokens, fileTokens } = compact(contents, 4_000, 3_000, 8);
    assert.ok(fileTokens > 4_000, `the file starts over its budget (${fileTokens})`);
    assert.ok(tokens <= 3_000, `${tokens} tokens after`);
    assert.equal(digests[0]?.id, 's1', 'the oldest first');
    assert.ok(
      digests.every((d) => !['s9', 's10'].includes(d.id)),
      'no protected section',
    );
    assert.match(digests[0]?.content ?? '', /^## 2026-01-01\n\n- 2026-01-01: 10 entries \(p0100–p0109\), full text in history\.\n$/);
  });

  it('puts back the smallest folded lines the target leaves room for (the guard refuses dropping them)', () => {
    // Short and long entries alternate: folding stops after a long one, with room for short ones.
    const uneven = (n: number) => {
      const date = dateOf(n);
      const lines = Array.from(
        { length: 10 },
        (_, i) => `- ${date}: p${String(n * 100 + i).padStart(4, '0')}: ${i % 2 === 0 ? 'ok' : 'a very long entry '.repeat(25)}`,
      );
      return `## ${date}\n\n${lines.join('\n')}\n`;
    };
    const contents = Array.from({ length: 6 }, (_, i) => uneven(i + 1));
    for (const target of [2_000, 2_050, 2_100, 2_150, 2_200]) compact(contents, target + 500, target, 5);
  });

  it('touches protected sections (never the newest) only when the others cannot bring the file within its budget', () => {
    const contents = Array.from({ length: 6 }, (_, i) => day(i + 1, 12));
    const { digests } = compact(contents, 2_000, 1_500, 3);
    const ids = digests.map((d) => d.id);
    assert.ok(ids.includes('s4'), 'a protected section digested');
    assert.ok(!ids.includes('s6'), 'the newest section stays whole');
  });

  it('leaves the protected part whole when the budget is met without it, even above the target', () => {
    const contents = Array.from({ length: 32 }, (_, i) => day(i + 1, 10));
    const { digests, tokens } = compact(contents, 2_200, 1_650, 30);
    assert.ok(tokens > 1_650, `the target cannot be met without the protected part (${tokens})`);
    assert.ok(digests.length === 30 && digests.every((d) => Number(d.id.slice(1)) <= 30));
  });

  it('answers no digest for a file already under its target', () => {
    assert.deepEqual(compact([day(1, 2)], 4_000, 3_000, 1).digests, []);
  });
});
