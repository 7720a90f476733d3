/**
 * Section 27 of the benchmark (run by bench.ts): stateless HTTP at N clients in the two MCP eras.
 * Three servers do the same work, a note fsynced into a file: `live-mem serve --http` answered in the
 * 2026-07-28 era (the SDK v2 client pinned to it: each request carries the `_meta` envelope and is
 * served by createMcpHandler, an McpServer built per request), the same process answered in the 2025
 * era (the v2 client in its default legacy mode: the process's one shared server), and a bare v2 SDK
 * server (scripts/minimal-eras-server.mjs: createMcpHandler + toNodeHandler, an McpServer per
 * request, one tool writing the note as live-mem writes it) answered in the 2026-07-28 era.
 *
 * Notes only: live-mem's searches (memory_search ranks over an index; live_search reads the space's
 * notes) have no bare equivalent doing as little (section 17 measures note + search against a bare
 * server calling live-mem's own library). Each of the N clients is its own Client object with its own
 * token (live-mem's limit of calls in flight applies per token, as on a team server); the rate limit
 * is off (LIVE_MEM_HTTP_RATE_LIMIT=0: 600 calls a minute a token would cap a client at 10 calls/s),
 * so the figures are what serving costs, not what throttling allows. Stores on tmpfs (/dev/shm) when
 * there is one, so the disk's fsync does not set the pace. After a warm-up run of each, rounds run the
 * three one after the other, the order rotated each round; a run connects the N clients, makes one
 * call each, then calls back to back for RUN_MS: calls/s, each call's latency, and the server
 * process's CPU (user + system of all its threads, /proc/PID/stat) over the window per call. The
 * clients run in this process: on a 2-core machine they take CPU from the server, alike for all three.
 *
 *   LIVE_MEM_BENCH_ERAS='{"clients":10,"rounds":3,"runMs":1000}'   another size (a quick look)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { cpuMs, figure, type Figure, percentile, progress, systemUnderTest } from './bench-lib.js';

export interface ErasSize {
  clients: number;
  rounds: number;
  /** Each measured run's length, and the warm-up run's. */
  runMs: number;
  warmMs: number;
}
export const ERAS_SIZE: ErasSize = { clients: 50, rounds: 3, runMs: 3_000, warmMs: 3_000, ...JSON.parse(process.env.LIVE_MEM_BENCH_ERAS ?? '{}') };

const MODERN = '2026-07-28';
const BARE = fileURLToPath(new URL('./minimal-eras-server.mjs', import.meta.url));
export const SERVERS = ['modern', 'legacy', 'bare'] as const;
export type ServerName = (typeof SERVERS)[number];
const LABEL: Record<ServerName, string> = {
  modern: `live-mem, ${MODERN} era`,
  legacy: 'live-mem, 2025 era',
  bare: `bare v2 SDK server, ${MODERN} era`,
};

/** One measured run of one server. */
export interface Run {
  calls: number;
  failed: number;
  perS: number;
  cpuPerCall: number;
  /** This process's CPU a call (the N clients, and the bench around them): shared by the machine's cores with the server's. */
  clientCpuPerCall: number;
  latencies: number[];
  load: number;
}

interface Target {
  url: string;
  pid: number;
  /** The token of client i (the bare server takes none). */
  token(i: number): string | undefined;
  era: 'modern' | 'legacy';
  spaceId: string;
}

function listening(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (!match) return;
      seen = '';
      child[stream]?.off('data', onData);
      child[stream]?.resume(); // keep draining what the server logs, or it blocks on a full pipe
      resolve(match[1] as string);
    };
    child[stream]?.on('data', onData);
    child.once('exit', () => reject(new Error(`server exited: ${seen}`)));
  });
}

/** `live-mem serve --http` on a store of its own, with a token per client and the two spaces the eras write into. */
async function startLiveMem(home: string, clients: number): Promise<{ child: ChildProcess; url: string; tokens: string[] }> {
  const core = createCore({ storage: createFsDriver(home) });
  const owner = ownerCaller('owner');
  for (const era of ['modern', 'legacy']) await core.spaces.create(owner, { space_id: `eras-${era}` });
  const tokens: string[] = [];
  for (let i = 0; i < clients; i++) {
    tokens.push((await core.auth.create(owner, { name: `bench-${i}`, permissions: 'read,write', space_ids: '*' })).token);
  }
  const child = spawn(process.execPath, [systemUnderTest().bin, 'serve', '--http', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'bench', LIVE_MEM_LOG_LEVEL: 'info', LIVE_MEM_HTTP_RATE_LIMIT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listening(child, 'stderr', /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  return { child, url, tokens };
}

async function startBare(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BARE, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await listening(child, 'stdout', /listening (\d+)/);
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function connect(target: Target, i: number): Promise<Client> {
  const mode = target.era === 'modern' ? { pin: MODERN } : 'legacy';
  const client = new Client({ name: `bench-eras-${i}`, version: '0' }, { versionNegotiation: { mode } });
  const token = target.token(i);
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(target.url), { requestInit }));
  if (client.getProtocolEra() !== target.era) throw new Error(`${target.url}: the client speaks ${client.getProtocolEra()}, not ${target.era}`);
  return client;
}

/** N clients, each its own Client, calling live_note back to back for `ms` (after one call each): calls/s, latencies, the server's CPU per call. */
async function load(target: Target, clients: number, ms: number): Promise<Run> {
  const connected = await Promise.all(Array.from({ length: clients }, (_, i) => connect(target, i)));
  let step = 0;
  let calls = 0;
  let failed = 0;
  const latencies: number[] = [];
  const note = async (client: Client, c: number) => {
    const args = { space_id: target.spaceId, category: 'progress', content: `step ${c}-${step++}: the token refresh path retries twice.` };
    const start = performance.now();
    const result = await client.callTool({ name: 'live_note', arguments: args }).catch((error: Error) => ({ isError: true, error }));
    if (result.isError) {
      failed++;
      if (failed === 1) progress(`  ${target.url} (${target.era}): a call failed: ${JSON.stringify(result).slice(0, 300)}`);
      return;
    }
    latencies.push(performance.now() - start);
    calls++;
  };
  try {
    await Promise.all(connected.map((client, c) => note(client, c)));
    calls = 0;
    latencies.length = 0;
    const loadNow = loadavg()[0] ?? 0;
    const before = cpuMs(target.pid);
    const clientBefore = process.cpuUsage();
    const start = performance.now();
    const end = start + ms;
    await Promise.all(
      connected.map(async (client, c) => {
        while (performance.now() < end) await note(client, c);
      }),
    );
    const elapsed = performance.now() - start;
    const after = cpuMs(target.pid);
    const own = process.cpuUsage(clientBefore);
    const cpu = before === null || after === null || calls === 0 ? Number.NaN : (after - before) / calls;
    return {
      calls,
      failed,
      perS: (calls * 1000) / elapsed,
      cpuPerCall: cpu,
      clientCpuPerCall: (own.user + own.system) / 1000 / calls,
      latencies,
      load: loadNow,
    };
  } finally {
    await Promise.all(connected.map((client) => client.close()));
  }
}

/** tmpfs where there is one (Linux), so the figures are serving, not the disk. */
const scratch = (): string => (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

/** Every run of every server: a warm-up each, then `size.rounds` rounds, the order rotated each round. */
export async function measureEras(size: ErasSize = ERAS_SIZE): Promise<Record<ServerName, Run[]>> {
  const root = await mkdtemp(path.join(scratch(), 'live-mem-bench-eras-'));
  const servers: ChildProcess[] = [];
  try {
    const liveMem = await startLiveMem(path.join(root, 'live-mem'), size.clients);
    servers.push(liveMem.child);
    const bare = await startBare(path.join(root, 'bare'));
    servers.push(bare.child);
    const ours = (era: 'modern' | 'legacy'): Target => ({
      url: liveMem.url,
      pid: liveMem.child.pid as number,
      token: (i) => liveMem.tokens[i],
      era,
      spaceId: `eras-${era}`,
    });
    const targets: Record<ServerName, Target> = {
      modern: ours('modern'),
      legacy: ours('legacy'),
      bare: { url: bare.url, pid: bare.child.pid as number, token: () => undefined, era: 'modern', spaceId: 'eras-bare' },
    };
    // A fresh process spends its first seconds compiling: each server (and era) warms up first.
    for (const name of SERVERS) await load(targets[name], size.clients, size.warmMs);
    const runs: Record<ServerName, Run[]> = { modern: [], legacy: [], bare: [] };
    for (let round = 0; round < size.rounds; round++) {
      const order = SERVERS.map((_, i) => SERVERS[(i + round) % SERVERS.length] as ServerName);
      for (const name of order) {
        const run = await load(targets[name], size.clients, size.runMs);
        runs[name].push(run);
        progress(
          `  round ${round + 1}/${size.rounds}, ${LABEL[name]} (load ${run.load.toFixed(1)}): ${run.perS.toFixed(0)} calls/s, ` +
            `p50 ${percentile(run.latencies, 50).toFixed(1)} ms, p99 ${percentile(run.latencies, 99).toFixed(1)} ms, ` +
            `CPU ${run.cpuPerCall.toFixed(3)} ms a call (clients ${run.clientCpuPerCall.toFixed(3)})${run.failed ? `, ${run.failed} failed` : ''}`,
        );
      }
    }
    return runs;
  } finally {
    await Promise.all(servers.map(stop));
    await rm(root, { recursive: true, force: true });
  }
}

const median = (values: readonly number[]): number => percentile(values, 50);
const spread = (values: readonly number[], digits = 2): string => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

/** The figures of the runs: per server, calls/s and CPU a call (medians of the rounds), p50/p99 of every call; the ratios, medians of the rounds'. */
export function erasFigures(runs: Record<ServerName, Run[]>, size: ErasSize): Figure[] {
  const figures: Figure[] = [];
  const n = size.clients;
  for (const name of SERVERS) {
    const mine = runs[name];
    const latencies = mine.flatMap((run) => run.latencies);
    const loads = `load ${spread(
      mine.map((run) => run.load),
      1,
    )}`;
    const cpus = mine.map((run) => run.cpuPerCall);
    const key = `eras_n${n}_${name}`;
    figures.push(
      figure(
        `${key}_calls_per_s`,
        `${LABEL[name]}: live_note calls/s, N=${n}, median of ${mine.length} (${loads})`,
        median(mine.map((r) => r.perS)),
        'calls/s',
      ),
      figure(`${key}_p50_ms`, `  p50 latency a call (${loads})`, latencies.length ? median(latencies) : null, 'ms'),
      figure(`${key}_p99_ms`, `  p99 latency a call (${loads})`, latencies.length ? percentile(latencies, 99) : null, 'ms'),
      figure(`${key}_cpu_ms`, `  server CPU a call (${spread(cpus, 3)} ms; ${loads})`, median(cpus), 'ms'),
    );
  }
  const ratios = (a: ServerName, b: ServerName, of: (run: Run) => number) => runs[a].map((run, i) => of(run) / of(runs[b][i] as Run));
  for (const [a, b, what] of [
    ['modern', 'legacy', `${MODERN} / 2025 era`],
    ['modern', 'bare', 'live-mem / bare v2 SDK server'],
  ] as const) {
    const throughput = ratios(a, b, (run) => run.perS);
    const cpu = ratios(a, b, (run) => run.cpuPerCall);
    figures.push(
      figure(`eras_n${n}_${a}_vs_${b}_throughput`, `${what}: throughput, median of the rounds' (${spread(throughput)})`, median(throughput), 'x'),
      figure(`eras_n${n}_${a}_vs_${b}_cpu`, `${what}: CPU a call, median of the rounds' (${spread(cpu)})`, median(cpu), 'x'),
    );
  }
  return figures;
}

export async function benchEras(): Promise<Figure[]> {
  const runs = await measureEras(ERAS_SIZE);
  const failed = SERVERS.reduce((sum, name) => sum + runs[name].reduce((s, run) => s + run.failed, 0), 0);
  if (failed > 0) throw new Error(`${failed} calls failed: the figures would not compare the same work`);
  return erasFigures(runs, ERAS_SIZE);
}
