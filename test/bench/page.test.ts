import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPage, checked, hybridSection, PAGE_END, PAGE_START, retrievalSection, splicePage } from '../../scripts/bench-page.js';
import type { LocomoRun } from '../../scripts/bench-locomo.js';
import { retentionSection } from '../../scripts/bench-page-retention.js';
import { SERVER_NAMES, type ServerSpeed, speedSection } from '../../scripts/bench-page-speed.js';

/**
 * The benchmark page's command (scripts/bench-page.ts, `npm run bench:page`) at its small size: the
 * shortest LoCoMo conversation of each split, one question in two (BM25, grep, the library and hybrid with the committed
 * GloVe vectors), the retention checks, 12 consolidations of the long-lived space, sessions of 150 notes
 * against the official memory server and the bare SDK server (the build's bin/: `npm test` builds
 * first). A figure it prints that cannot be computed (NaN, missing, no question asked) fails here
 * before it reaches the page.
 */
describe('the benchmark page', () => {
  it('refuses a figure it cannot compute', () => {
    assert.equal(checked('x', 0.5), '0.500');
    assert.equal(checked('notes', 369, 0), '369');
    assert.equal(checked('recall', 1), '1.000');
    assert.throws(() => checked('recall', Number.NaN), /recall cannot be computed \(NaN\)/);
    assert.throws(() => checked('p50', undefined), /p50 cannot be computed/);
    assert.throws(() => checked('flags', null), /flags cannot be computed/);
    const empty = { split: 'dev', conversations: [], results: [], weights: [] } as unknown as LocomoRun;
    assert.throws(() => retrievalSection('empty', empty, { start: 0, end: 0 }, 0), /the dev split asked no question/);
    assert.throws(() => hybridSection(empty, { start: 0, end: 0 }), /the dev split ran without vectors/);
    // A server whose CPU could not be read, or a missing server, stops the speed part.
    const server: ServerSpeed = { writeP50: 1, writeCpu: 1, searchP50: 1, searchCpu: 1, peakRss: 80 };
    const servers = new Map(SERVER_NAMES.map((name) => [name, { ...server }]));
    const speed = { size: { notes: 1, searches: 1, rounds: 1 }, servers, load: { start: 0, end: 0 } };
    assert.equal(speedSection(speed, 0).filter((line) => line.startsWith('| write')).length, 2);
    servers.set('live-mem', { ...server, writeCpu: null });
    assert.throws(() => speedSection(speed, 0), /live-mem write CPU per call, server \(ms\) cannot be computed \(null\)/);
    servers.delete('bare SDK server');
    servers.set('live-mem', server);
    assert.throws(() => speedSection(speed, 0), /bare SDK server write p50, wall \(ms\) cannot be computed \(null\)/);
    // A retention figure without its line saying what it does not show stops the page too.
    const figure = { key: 'retention_new', label: 'new', value: 1, unit: 'ratio' as const, target: undefined };
    assert.throws(() => retentionSection('t', '', [figure], { start: 0, end: 0 }, 0), /retention_new has no line/);
  });

  it('goes between its markers in docs/benchmarks.md, or at the end', () => {
    const page = `${PAGE_START}\nnew\n${PAGE_END}`;
    assert.equal(splicePage(`# B\n\ntext\n\n${PAGE_START}\nold\n${PAGE_END}\n`, page), `# B\n\ntext\n\n${page}\n`);
    assert.equal(splicePage('# B\n', page), `# B\n\n${page}\n`);
  });

  it('computes every figure of the page on one conversation per split', { timeout: 600_000 }, async () => {
    const page = await buildPage({ small: true });
    assert.ok(page.startsWith(PAGE_START) && page.endsWith(PAGE_END));
    assert.doesNotMatch(page, /NaN|undefined|Infinity|n\/a/);
    for (const heading of [
      '### LoCoMo retrieval, development conversations',
      '#### Hybrid search with word vectors, development conversations',
      '### LoCoMo retrieval, held-out conversations',
      '#### Hybrid search with word vectors, held-out conversations',
      '### Retention check, development conversations (30)',
      '### Retention check, held-out conversations (49)',
      '### Retention across consolidations and compactions',
      '### Speed and memory: one session against the official memory server and a bare SDK server',
    ])
      assert.ok(page.includes(`\n${heading}`), heading);
    const lines = page.split('\n');
    /** The table rows of the part that opens with `heading`, up to the next heading. */
    const rowsOf = (heading: string) => {
      const from = lines.findIndex((line) => line.startsWith(heading));
      const to = lines.findIndex((line, i) => i > from && line.startsWith('#'));
      return lines
        .slice(from, to)
        .filter((line) => line.startsWith('| ') && !line.startsWith('| figure') && !line.startsWith('| category') && !line.startsWith('| live-mem |'));
    };
    const load = String.raw`\d+\.\d → \d+\.\d`;
    for (const split of ['development', 'held-out']) {
      // The nine retrieval rows with three rankers' figures, the load and what each does not show.
      const retrieval = rowsOf(`### LoCoMo retrieval, ${split}`).filter((line) => /^\| (turn|session) /.test(line));
      assert.equal(retrieval.length, 9, split);
      for (const row of retrieval) assert.match(row, new RegExp(String.raw`^\| [^|]+ \| \d\.\d{3} \| \d\.\d{3} \| \d\.\d{3} \| ${load} \| \S`));
      // The six hybrid rows: BM25 alone, hybrid, the difference; then a row per category.
      const hybrid = rowsOf(`#### Hybrid search with word vectors, ${split}`);
      const [figures, categories] = [hybrid.filter((row) => !/^\| \d /.test(row)), hybrid.filter((row) => /^\| \d /.test(row))];
      assert.equal(figures.length, 6, split);
      for (const row of figures) assert.match(row, new RegExp(String.raw`^\| [^|]+ \| \d\.\d{3} \| \d\.\d{3} \| -?\d\.\d{3} \| ${load} \| \S`));
      assert.ok(categories.length >= 3, split);
      for (const row of categories) assert.match(row, new RegExp(String.raw`^\| \d [a-z-]+ \(\d+\) \| (\d\.\d{3} \| ){4}${load} \|$`));
    }
    assert.match(page, /conversations 30: 369 turns in 19 sessions, 41 questions of categories 1–4/);
    assert.match(page, /conversations 49: 509 turns in 25 sessions, 78 questions of categories 1–4/);
    // The retention figures, each with its load and what it does not show: the check's own, then the final bank's.
    for (const heading of ['### Retention check, development', '### Retention check, held-out']) {
      const retention = rowsOf(heading);
      assert.equal(retention.length, 12, heading);
      for (const row of retention) assert.match(row, new RegExp(String.raw`^\| [^|]+ \| -?\d+(\.\d+)? \| ${load} \| \S`));
    }
    const bank = rowsOf('### Retention across consolidations and compactions');
    assert.equal(bank.length, 9);
    for (const row of bank) assert.match(row, new RegExp(String.raw`^\| [^|]+ \| \d+(\.\d{3})? \| ${load} \| \S`));
    assert.ok(
      bank.some((row) => /^\| compactions \(model calls\) \| [1-9]/.test(row)),
      'compactions ran',
    );
    assert.match(page, /\| final bank: notes whose id it names \(of 360\) \| 1\.000 \|/);
    // Speed: five rows, three servers, two ratios, the load.
    const speed = rowsOf('### Speed and memory');
    assert.equal(speed.length, 5);
    for (const row of speed) assert.match(row, new RegExp(String.raw`^\| [^|]+ \| (\d+\.\d+ \| ){5}${load} \| \S`));
  });
});
