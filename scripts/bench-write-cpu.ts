/**
 * Section 25 of the benchmark (run by bench.ts): what a note's write costs in CPU, in-process
 * through the core on tmpfs (/dev/shm), so the disk's fsync time is out of the figure and what is
 * left is live-mem's own work (validation, the secret scan, the name, the file, the caches, GC).
 * Each round is a fresh process that writes WARM_UP notes, then WRITE_NOTES sequential notes (section
 * 2's), and reports process.cpuUsage() over them (every thread: the libuv pool's file calls and V8's GC
 * threads count). With `--baseline <ref>` the rounds alternate between this build and the ref's
 * (bench.ts builds it in a temporary worktree), at least 10 of each, so a drifting machine weighs
 * on both alike; the figure is the median with its spread, and the ratio is the median of the
 * rounds' ratios (each this round against the baseline round beside it). The child
 * (bench-write-cpu-child.mjs) is plain JavaScript, with no TypeScript loader beside the measured
 * calls, and loads each build's dist/index.js, the library as it ships.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { atMost, baselineRoot, figure, type Figure, percentile, progress, REPO } from './bench-lib.js';
import { CATEGORIES } from '../src/core/validate.js';

const WARM_UP = 300;
const WRITE_NOTES = 2_000;
const ROUNDS = 10;
const TARGET_VS_BASELINE = 1;

interface ChildReport {
  cpuMs: number;
  wallMs: number;
}

const CHILD = fileURLToPath(new URL('./bench-write-cpu-child.mjs', import.meta.url));
/** The notes of section 2 and 3 (bench-notes.ts noteArgs): a category in turn, one sentence, two tags. */
const NOTE_SHAPE = JSON.stringify({
  categories: CATEGORIES,
  prefix: 'Bench note ',
  suffix: ': the token refresh path retries twice before surfacing the error to the caller.',
  tags: 'bench,perf',
});

/** One round on the build at `root`, in a new process on a new store. */
async function runChild(root: string): Promise<ChildReport> {
  const home = await mkdtemp(path.join(shmOrTmp(), 'live-mem-bench-cpu-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD, root, home, String(WRITE_NOTES), String(WARM_UP), NOTE_SHAPE], {
      maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout) as ChildReport;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** tmpfs where there is one (Linux), so the figure is CPU, not the disk. */
const shmOrTmp = (): string => (process.platform === 'linux' ? '/dev/shm' : tmpdir());

const spread = (values: readonly number[]): string => `${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}`;

export async function benchWriteCpu(): Promise<Figure[]> {
  const base = baselineRoot();
  const ours: number[] = [];
  const theirs: number[] = [];
  const ratios: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(loadavg()[0] ?? 0);
    // Which build goes first turns each round.
    const order = base && round % 2 === 1 ? [base, REPO] : [REPO, ...(base ? [base] : [])];
    const results = new Map<string, ChildReport>();
    for (const root of order) results.set(root, await runChild(root));
    const own = results.get(REPO) as ChildReport;
    ours.push(own.cpuMs);
    const other = base ? results.get(base) : undefined;
    if (other) {
      theirs.push(other.cpuMs);
      ratios.push(own.cpuMs / other.cpuMs);
    }
    progress(
      `  round ${round + 1}/${ROUNDS} (load ${loads.at(-1)?.toFixed(1)}): ${own.cpuMs.toFixed(3)} ms CPU a note${other ? `, baseline ${other.cpuMs.toFixed(3)} (${(own.cpuMs / other.cpuMs).toFixed(2)}×)` : ''}`,
    );
  }
  const notes = WRITE_NOTES.toLocaleString('en');
  const figures = [
    figure('write_cpu_ms', `a note's CPU, in-process on tmpfs (${notes} notes, median of ${ROUNDS} rounds; ${spread(ours)} ms)`, percentile(ours, 50), 'ms'),
    figure('write_cpu_load', `  load average over the rounds (${spread(loads)})`, percentile(loads, 50), 'ratio'),
  ];
  if (base) {
    figures.push(
      figure('write_cpu_baseline_ms', `  the baseline's, rounds interleaved (${spread(theirs)} ms)`, percentile(theirs, 50), 'ms'),
      figure('write_cpu_vs_baseline', `  ratio, median of the rounds' (${spread(ratios)})`, percentile(ratios, 50), 'x', atMost(TARGET_VS_BASELINE)),
    );
  }
  return figures;
}

