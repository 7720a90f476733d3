/**
 * Section 25 of the benchmark (run by bench.ts): what a note's write costs.
 *
 * 1. CPU, in-process through the core on tmpfs (/dev/shm), so the disk's fsync time is out of the
 *    figure and what is left is live-mem's own work (validation, the secret scan, the name, the file,
 *    the caches, GC, V8 compiling the hot path). Each round is a new process that writes WARM_UP
 *    notes, then WRITE_NOTES sequential notes (section 2's), and reports process.cpuUsage() over them
 *    (every thread: the libuv pool's file calls, V8's GC and compiler threads). With `--baseline
 *    <ref>` the rounds alternate between this build and the ref's (bench.ts builds it in a temporary
 *    worktree), ROUNDS of each, so a drifting machine weighs on both alike; the figure is the median
 *    with its spread, and the ratio the median of the rounds' ratios (each round against the
 *    baseline's beside it). The child (bench-writes-child.mjs) is plain JavaScript, with no
 *    TypeScript loader beside the measured calls, and loads each build's dist/index.js, the library
 *    as it ships.
 * 2. 2,000 short notes over MCP stdio, durable (fsynced) on the temp folder's disk, against the
 *    official memory server's create_entities of as many facts (it appends to a JSONL file without
 *    fsync), in alternated rounds with a new server and store each: wall time, server CPU a call
 *    (/proc), the median of the rounds' ratios, with the load.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  atLeast,
  atMost,
  baselineRoot,
  cpuPerCall,
  figure,
  type Figure,
  freshHome,
  PEER,
  peerAvailable,
  percentile,
  progress,
  REPO,
  timeCalls,
  timeMs,
  withServer,
} from './bench-lib.js';
import { CATEGORIES } from '../src/core/validate.js';

const WARM_UP = 300;
const WRITE_NOTES = 2_000;
const ROUNDS = 10;
const TARGET_VS_BASELINE = 1;

interface ChildReport {
  cpuMs: number;
  wallMs: number;
}

const CHILD = fileURLToPath(new URL('./bench-writes-child.mjs', import.meta.url));
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

// ---------------------------------------------------------------------------------------------
// 2,000 short notes over MCP stdio against the official memory server

const MCP_NOTES = 2_000;
const MCP_ROUNDS = 5;
const TARGET_VS_PEER = 2;
/** The notes of issue 43's first-searches scenario: short, one of 97 components each. */
const fact = (i: number): string => `fact ${i} about component-${i % 97}`;

interface McpRound {
  ms: number;
  cpu: number | null;
}

/** live-mem: `MCP_NOTES` live_note calls one after the other into a new space, on a new server. */
async function liveMemRound(): Promise<McpRound> {
  return withServer(await freshHome('writes-mcp'), async (server) => {
    await server.call('space_create', { space_id: 'facts' });
    const { result, cpu } = await cpuPerCall(
      server.pid,
      () => timeMs(() => timeCalls(MCP_NOTES, 1, (i) => server.call('live_note', { space_id: 'facts', category: 'observation', content: fact(i) }))),
      MCP_NOTES,
    );
    return { ms: result, cpu };
  });
}

/** The official server: as many facts, one entity per create_entities call (it appends to its JSONL file, without fsync). */
async function peerRound(): Promise<McpRound> {
  return withServer(
    await freshHome('writes-peer'),
    async (server) => {
      const { result, cpu } = await cpuPerCall(
        server.pid,
        () =>
          timeMs(() =>
            timeCalls(MCP_NOTES, 1, (i) => server.call('create_entities', { entities: [{ name: `fact-${i}`, entityType: 'fact', observations: [fact(i)] }] })),
          ),
        MCP_NOTES,
      );
      return { ms: result, cpu };
    },
    PEER,
  );
}

/**
 * `MCP_NOTES` durable notes over MCP stdio (a new server and store each round, on the temp folder's
 * disk) against the official server's appends, in alternated rounds: wall time, server CPU a call,
 * the ratio of the rounds' (each beside the peer's round next to it), with the load and the fsync time.
 */
export async function benchWritesVsPeer(): Promise<Figure[]> {
  if (!(await peerAvailable())) return [];
  const ours: McpRound[] = [];
  const theirs: McpRound[] = [];
  const ratios: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < MCP_ROUNDS; round++) {
    loads.push(loadavg()[0] ?? 0);
    // Which goes first turns each round.
    let own: McpRound;
    let peer: McpRound;
    if (round % 2 === 0) {
      own = await liveMemRound();
      peer = await peerRound();
    } else {
      peer = await peerRound();
      own = await liveMemRound();
    }
    ours.push(own);
    theirs.push(peer);
    ratios.push(peer.ms / own.ms);
    progress(
      `  round ${round + 1}/${MCP_ROUNDS} (load ${loads.at(-1)?.toFixed(1)}): live-mem ${own.ms.toFixed(0)} ms (CPU ${own.cpu?.toFixed(3)} ms a call), official server ${peer.ms.toFixed(0)} ms (CPU ${peer.cpu?.toFixed(3)}): ${ratios.at(-1)?.toFixed(2)}×`,
    );
  }
  const cpus = (rounds: McpRound[]) => rounds.flatMap((r) => (r.cpu === null ? [] : [r.cpu]));
  const median = (values: number[]) => (values.length > 0 ? percentile(values, 50) : null);
  const label = MCP_NOTES.toLocaleString('en');
  return [
    figure(
      'writes_mcp_ms',
      `${label} short notes over MCP, one at a time (median of ${MCP_ROUNDS} rounds; ${spread(ours.map((r) => r.ms))} ms)`,
      median(ours.map((r) => r.ms)),
      'ms',
    ),
    figure('writes_mcp_cpu_ms', '  server CPU a note', median(cpus(ours)), 'ms'),
    figure(
      'writes_peer_ms',
      `  the official memory server, ${label} create_entities (${spread(theirs.map((r) => r.ms))} ms)`,
      median(theirs.map((r) => r.ms)),
      'ms',
    ),
    figure('writes_peer_cpu_ms', '    its CPU a call', median(cpus(theirs)), 'ms'),
    figure('writes_vs_peer', `  speed-up vs the official server, median of the rounds' (${spread(ratios)})`, median(ratios), 'x', atLeast(TARGET_VS_PEER)),
    figure('writes_mcp_load', `  load average over the rounds (${spread(loads)})`, median(loads), 'ratio'),
  ];
}
