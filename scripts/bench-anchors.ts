/**
 * Section 28 of the benchmark (run by bench.ts): what anchors cost (src/core/anchors/, issue 45). A git
 * repository of FILES files (FILES / 100 folders, 40 lines each, committed), 1,000 anchors over them —
 * a third lines, a third symbols, a third whole files — captured through the bounded checkout reader
 * (config/checkout.ts), then checked: the first check of a new process (a fresh checkout: every file read
 * once), then warm checks (nothing changed: the check kept by the file's version answers), p50 and p99 of
 * all 1,000 checked, over ROUNDS rounds; and what capturing a note's anchors adds to its write (a note citing
 * three places, against the same note citing none). The load average is printed beside each figure.
 *
 * End to end (the tools' own paths, on a core over the fs store): a space of 1,000 notes, each anchored to
 * one of the places, searched and given as context with and without the reader's checkout, in turns —
 * memory_search's hits checked as the tool checks them, memory_context labelling and ranking its notes — and
 * a note's whole write with its anchors captured from its text against the same write citing nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { gitCheckout } from '../src/config/checkout.js';
import { type Anchor, captureAnchor, checkAnchor } from '../src/core/anchors/anchor.js';
import { anchorsFor, withCheckedAnchors } from '../src/core/anchors/note-anchors.js';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import type { Checkout } from '../src/shared/checkout.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { atMost, type Figure, figure, freshHome, percentile, progress, timeMs } from './bench-lib.js';

/** The repository's size and the rounds: the section's, or a tiny one (test/bench/anchors.test.ts). */
export interface AnchorBenchSize {
  files: number;
  rounds: number;
  notes: number;
}
const FULL: AnchorBenchSize = { files: 10_000, rounds: 20, notes: 200 };
const load = () => (loadavg()[0] ?? 0).toFixed(1);

const fileText = (i: number) =>
  [
    `// module ${i}`,
    `export function handler${i}(input: string) {`,
    ...Array.from({ length: 36 }, (_, j) => `  const step${j} = input.length + ${i * j};`),
    '}',
    '',
  ].join('\n');

async function repository(dir: string, files: number): Promise<void> {
  for (let folder = 0; folder < files / 100; folder++) {
    await mkdir(path.join(dir, `src/m${folder}`), { recursive: true });
    await Promise.all(Array.from({ length: 100 }, (_, k) => writeFile(path.join(dir, `src/m${folder}/f${k}.ts`), fileText(folder * 100 + k))));
  }
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' },
    });
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:bench/anchors.git');
  git('add', '.');
  git('commit', '-q', '-m', 'bench');
}

const pathOf = (i: number) => `src/m${Math.floor(i / 100)}/f${i % 100}.ts`;

async function checkAll(checkout: Checkout, anchors: readonly Anchor[]): Promise<number> {
  const start = performance.now();
  for (const anchor of anchors) await checkAnchor(checkout, anchor);
  return performance.now() - start;
}

export async function benchAnchors(size: AnchorBenchSize = FULL): Promise<Figure[]> {
  const { files: FILES, rounds: ROUNDS, notes: NOTES } = size;
  const ANCHORS = Math.min(1_000, FILES);
  const dir = await freshHome('anchors');
  const started = performance.now();
  await repository(dir, FILES);
  progress(`  anchors: a repository of ${FILES} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const writer = (await gitCheckout(dir)) as Checkout;
  const anchors: Anchor[] = [];
  for (let n = 0; n < ANCHORS; n++) {
    const file = Math.floor((n * FILES) / ANCHORS);
    const citation =
      n % 3 === 0
        ? { path: pathOf(file), lines: [3, 10] as [number, number] }
        : n % 3 === 1
          ? { path: pathOf(file), symbol: `handler${file}` }
          : { path: pathOf(file) };
    const anchor = await captureAnchor(writer, citation);
    if ('refused' in anchor) throw new Error(anchor.refused);
    anchors.push(anchor);
  }
  // A new process: a checkout of its own, nothing cached.
  const first = await checkAll((await gitCheckout(dir)) as Checkout, anchors);
  const reader = (await gitCheckout(dir)) as Checkout;
  await checkAll(reader, anchors);
  const warm: number[] = [];
  for (let round = 0; round < ROUNDS; round++) warm.push(await checkAll(reader, anchors));
  progress(`  anchors: first ${first.toFixed(0)} ms, warm ${warm.map((ms) => ms.toFixed(1)).join(' ')} ms (load ${load()})`);
  // What capturing adds to a note's write: the text's citations read from the checkout (the store's write is the same either way).
  const cited = `Retries live in ${pathOf(1)}:3-10, the handler \`handler2\` in ${pathOf(2)} and ${pathOf(3)}.`;
  const plain = 'Retries live in the network module, the handler, and the third file.';
  const withAnchors: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < NOTES; i++) {
    let t = performance.now();
    await anchorsFor(writer, cited);
    withAnchors.push(performance.now() - t);
    t = performance.now();
    await anchorsFor(writer, plain);
    without.push(performance.now() - t);
  }
  const p = (values: number[], q: number) => percentile(values, q);
  const tools = await endToEnd(anchors, writer, dir, ROUNDS * 5);
  return [
    ...tools,
    figure('anchors_first_check_ms', `${ANCHORS} anchors over ${FILES} files: checked by a new process (every file read once; load ${load()})`, first, 'ms'),
    figure('anchors_warm_p50_ms', `  the same, warm, p50 of ${ROUNDS} rounds (all ${ANCHORS})`, p(warm, 50), 'ms'),
    figure('anchors_warm_p99_ms', '  the same, warm, p99', p(warm, 99), 'ms'),
    figure('anchors_warm_per_anchor_us', '  warm, one anchor (p50 / anchors)', (p(warm, 50) / ANCHORS) * 1000, 'ratio'),
    figure(
      'anchors_capture_p50_ms',
      "  a note's write: capturing three anchors from its text, p50 (the commit asked of git included)",
      p(withAnchors, 50),
      'ms',
    ),
    figure('anchors_capture_none_p50_ms', '  the same note citing nothing, p50', p(without, 50), 'ms'),
  ];
}

/** The tools' paths with and without the reader's checkout, in turns: what the checks add to each, p50 and p99. */
async function endToEnd(anchors: readonly Anchor[], writer: Checkout, dir: string, calls: number): Promise<Figure[]> {
  const core = createCore({ storage: createFsDriver(await freshHome('anchors-store')) });
  const caller = ownerCaller('bench');
  const space = { space_id: 'anchored' };
  await core.spaces.create(caller, space);
  for (const [i, anchor] of anchors.entries()) {
    await core.notes.write(caller, {
      ...space,
      category: 'insight',
      content: `Handler ${i} retries through ${anchor.path}: step ${i % 37}.`,
      anchors: [anchor],
    });
  }
  const query = (i: number) => `handler ${(i * 37) % anchors.length} retries step ${i % 37}`;
  const search = (i: number) => core.recall.search(caller, { ...space, query: query(i), limit: 10 });
  const reader = (await gitCheckout(dir)) as Checkout;
  const firstContext = await timeMs(() => core.recall.context(caller, { ...space, query: query(0) }, { checkout: reader }));
  const firstPlain = await timeMs(() => core.recall.context(caller, { ...space, query: query(0) }));
  const timings = { search: [] as number[], searchChecked: [] as number[], context: [] as number[], contextChecked: [] as number[] };
  for (let i = 1; i <= calls; i++) {
    timings.search.push(await timeMs(() => search(i)));
    timings.searchChecked.push(await timeMs(async () => withCheckedAnchors(reader, (await search(i)).results)));
    timings.context.push(await timeMs(() => core.recall.context(caller, { ...space, query: query(i) })));
    timings.contextChecked.push(await timeMs(() => core.recall.context(caller, { ...space, query: query(i) }, { checkout: reader })));
  }
  const writes = { cited: [] as number[], plain: [] as number[] };
  const cited = `Retries live in ${anchors[0]?.path}:3-10 and ${anchors[3]?.path}.`;
  for (let i = 0; i < calls; i++) {
    writes.cited.push(
      await timeMs(async () => core.notes.write(caller, { ...space, category: 'insight', content: cited, anchors: await anchorsFor(writer, cited) })),
    );
    writes.plain.push(await timeMs(async () => core.notes.write(caller, { ...space, category: 'insight', content: 'Retries live in the network module.' })));
  }
  await core.idle();
  const p = (values: number[], q: number) => percentile(values, q);
  const added = (checked: number[], plain: number[], q: number) => p(checked, q) - p(plain, q);
  progress(
    `  anchors: memory_context p50 ${p(timings.contextChecked, 50).toFixed(2)} ms checked, ${p(timings.context, 50).toFixed(2)} ms not (load ${load()})`,
  );
  return [
    figure(
      'anchors_search_added_p50_ms',
      `memory_search over ${anchors.length} anchored notes: added by checking its hits, p50 (${calls} calls each way)`,
      added(timings.searchChecked, timings.search, 50),
      'ms',
      atMost(20),
    ),
    figure('anchors_search_added_p99_ms', '  the same, p99', added(timings.searchChecked, timings.search, 99), 'ms'),
    figure('anchors_search_p50_ms', '  memory_search itself, checked, p50', p(timings.searchChecked, 50), 'ms'),
    figure(
      'anchors_context_added_p50_ms',
      'memory_context (a query): added by labelling and ranking its notes, p50',
      added(timings.contextChecked, timings.context, 50),
      'ms',
      atMost(20),
    ),
    figure('anchors_context_added_p99_ms', '  the same, p99', added(timings.contextChecked, timings.context, 99), 'ms'),
    figure('anchors_context_p50_ms', '  memory_context itself, checked, p50', p(timings.contextChecked, 50), 'ms'),
    figure('anchors_context_first_added_ms', "  a reader's first context with a new checkout (its files read), added", firstContext - firstPlain, 'ms'),
    figure(
      'anchors_write_added_p50_ms',
      "a note's whole write: added by capturing two anchors from its text, p50",
      added(writes.cited, writes.plain, 50),
      'ms',
    ),
  ];
}
