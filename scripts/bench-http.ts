/**
 * Section 17 of the benchmark: `live-mem serve --http` against the bare stateless SDK server doing the
 * same work (scripts/minimal-http-server.mjs: same two tools, calling live-mem's own library for the
 * note and the search, so the same files and the same hits; no logging on either side; the bare server
 * runs as the SDK's example would, with Node's default thread pool, live-mem with the one its bin/
 * sets). Both serve one store, and each run writes into the same space as the other server's run of
 * the round, which grows through the section as a real space does. N clients (the SDK's Client over
 * Streamable HTTP, one token) each call live_note then memory_search over and over, with queries drawn
 * from the notes' own words.
 *
 * The ratio moves with the machine's load (about 0.3 between runs of three rounds), so it is judged on
 * many rounds, interleaved: both servers run for the whole section, warmed up first for HTTP_WARM_MS
 * (a fresh process spends its first seconds compiling: twice the CPU per call, on both sides); a
 * round drives one then the other (the order alternates between rounds) for HTTP_RUN_MS each, each
 *  in the round's space (one per N), and measures calls/s and the server process's own CPU time (user + system
 * of all its threads, /proc/PID/stat) per call. Each round gives a ratio (live-mem / bare) from two
 * runs seconds apart, on a space of about the same size (each server's index catches up with the
 * other's notes, as two processes sharing a store do); the figures are the median ratio and its
 * spread (min–max). Targets at N = 50: ≥ 0.9× the throughput, ≤ 1.2× the CPU per call.
 *
 *   LIVE_MEM_BENCH_BARE_POOL=16                     the bare server's libuv thread pool (default: Node's, 4;
 *                                                   live-mem's bin/ sets 16 for itself)
 *   LIVE_MEM_BENCH_HTTP_PLAN='[{"clients":50,"rounds":3}]'   other rounds than PLAN (a quick look while working)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import path from 'node:path';
import { atLeast, atMost, cpuPerCall, figure, freshHome, progress, systemUnderTest, type Figure } from './bench-lib.js';
import { searchQueries, syntheticNotes, vocabulary } from './bench-text.js';

/** Notes and queries of the generated vocabulary (bench-text.ts): every query finds notes. */
const NOTES = syntheticNotes(4_096, 17, vocabulary());

/** Rounds per N: the target is judged at N = 50, so it gets the most. About 7 s a round. */
const PLAN = process.env.LIVE_MEM_BENCH_HTTP_PLAN
  ? JSON.parse(process.env.LIVE_MEM_BENCH_HTTP_PLAN)
  : ([
      { clients: 10, rounds: 3 },
      { clients: 50, rounds: 9 },
      { clients: 200, rounds: 3 },
    ] as const);
const HTTP_WARM_MS = 4_000;
const HTTP_RUN_MS = 3_000;
const MINIMAL = fileURLToPath(new URL('./minimal-http-server.mjs', import.meta.url));
const TARGET = { throughput: 0.9, cpu: 1.2 } as const;

interface Served {
  url: string;
  token: string;
  child: ChildProcess;
  /** Makes the space a run writes into (live-mem needs it to exist; the bare server has no spaces). */
  newSpace(spaceId: string): Promise<void>;
}

function started(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child[stream]?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', () => reject(new Error(`server exited: ${seen}`)));
  });
}

async function startLiveMem(home: string): Promise<Served> {
  const core = createCore({ storage: createFsDriver(home) });
  const owner = ownerCaller('owner');
  const { token } = await core.auth.create(owner, { name: 'bench', permissions: 'read,write', space_ids: '*' });
  const { bin } = systemUnderTest();
  const child = spawn(process.execPath, [bin, 'serve', '--http', '--port', '0'], {
    env: {
      PATH: process.env.PATH ?? '',
      LIVE_MEM_HOME: home,
      LIVE_MEM_LOG_LEVEL: 'info',
      LIVE_MEM_HTTP_MAX_CONNECTIONS: '2000',
      LIVE_MEM_HTTP_MAX_IN_FLIGHT: '2000',
      LIVE_MEM_HTTP_RATE_LIMIT: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await started(child, 'stderr', /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  // Made by this process, as another process (the CLI) would: the server sees it on its first call.
  const spaces = new Set<string>();
  const newSpace = async (spaceId: string) => {
    if (spaces.has(spaceId)) return;
    spaces.add(spaceId);
    await core.spaces.create(owner, { space_id: spaceId });
  };
  return { url, token, child, newSpace };
}

/** The bare server on the same store (`home`), with the library of the build measured. */
async function startMinimal(home: string, newSpace: Served['newSpace']): Promise<Served> {
  const pool = process.env.LIVE_MEM_BENCH_BARE_POOL;
  const env = { ...process.env, LIVE_MEM_LOG_LEVEL: 'warn', ...(pool ? { UV_THREADPOOL_SIZE: pool } : {}) };
  const library = path.join(systemUnderTest().root, 'dist', 'index.js');
  const child = spawn(process.execPath, [MINIMAL, home, library], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await started(child, 'stdout', /listening (\d+)/);
  return { url: `http://127.0.0.1:${port}/mcp`, token: 'none', child, newSpace };
}

async function stop(served: Served): Promise<void> {
  if (served.child.exitCode === null) {
    const exited = new Promise((resolve) => served.child.once('exit', resolve));
    served.child.kill('SIGTERM');
    await exited;
  }
}

/** One measured run: calls/s and the server's CPU ms per call. */
interface Measure {
  perS: number;
  cpuPerCall: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** N clients calling note + search in the space of this N, which grows from round to round, for `ms` (after a first call each): calls/s and CPU per call. */
async function load(served: Served, clients: number, spaceId: string, ms: number): Promise<Measure> {
  await served.newSpace(spaceId);
  const connected = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new Client({ name: 'bench-http', version: '0' });
      const headers = { authorization: `Bearer ${served.token}` };
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers } }));
      return client;
    }),
  );
  let calls = 0;
  let step = 0;
  const queries = searchQueries(vocabulary(), 64, spaceId.length);
  const drive = (ms: number) => {
    const end = performance.now() + ms;
    return Promise.all(
      connected.map(async (client, c) => {
        do {
          const i = step++;
          for (const [name, args] of [
            ['live_note', { space_id: spaceId, category: 'progress', content: `step ${c}-${i}: ${NOTES[i % NOTES.length]}` }],
            ['memory_search', { space_id: spaceId, query: queries[i % queries.length] as string, limit: 5 }],
          ] as const) {
            const result = await client.callTool({ name, arguments: args });
            if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 200)}`);
            calls++;
          }
        } while (performance.now() < end);
      }),
    );
  };
  await drive(0); // one round of calls: the clients' connections are open, the space's index is built
  calls = 0;
  const pid = served.child.pid as number;
  const start = performance.now();
  const { cpu } = await cpuPerCall(
    pid,
    () => drive(ms),
    () => calls,
  );
  const elapsed = performance.now() - start;
  await Promise.all(connected.map((client) => client.close()));
  return { perS: (calls * 1000) / elapsed, cpuPerCall: cpu ?? Number.NaN };
}

/** One round: both servers measured one after the other (`oursFirst` alternates), in the space of this N, which grows. */
async function round(ours: Served, bare: Served, clients: number, oursFirst: boolean): Promise<{ mine: Measure; base: Measure }> {
  const run = (served: Served) => load(served, clients, `bench-n${clients}`, HTTP_RUN_MS);
  if (oursFirst) {
    const mine = await run(ours);
    return { mine, base: await run(bare) };
  }
  const base = await run(bare);
  return { base, mine: await run(ours) };
}

const fixed = (value: number): string => value.toFixed(2);

export async function benchHttp(): Promise<Figure[]> {
  const home = await freshHome('http');
  const ours = await startLiveMem(home);
  const bare = await startMinimal(home, ours.newSpace);
  try {
    for (const served of [ours, bare]) await load(served, 50, 'warm-up', HTTP_WARM_MS);
    return await measure(ours, bare);
  } finally {
    await Promise.all([stop(ours), stop(bare)]);
    await rm(home, { recursive: true, force: true });
  }
}

async function measure(ours: Served, bare: Served): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const { clients: n, rounds: count } of PLAN) {
    const load1 = loadavg()[0] ?? 0;
    const rounds: Array<{ mine: Measure; base: Measure }> = [];
    for (let r = 0; r < count; r++) rounds.push(await round(ours, bare, n, r % 2 === 1));
    const throughput = rounds.map((x) => x.mine.perS / x.base.perS);
    const cpu = rounds.map((x) => x.mine.cpuPerCall / x.base.cpuPerCall);
    const mine = { perS: median(rounds.map((x) => x.mine.perS)), cpuPerCall: median(rounds.map((x) => x.mine.cpuPerCall)) };
    const base = { perS: median(rounds.map((x) => x.base.perS)), cpuPerCall: median(rounds.map((x) => x.base.cpuPerCall)) };
    progress(
      `  N=${n} (${count} rounds, load ${load1.toFixed(1)} → ${(loadavg()[0] ?? 0).toFixed(1)}): live-mem ${mine.perS.toFixed(0)} calls/s, ${fixed(mine.cpuPerCall)} ms CPU/call; ` +
        `bare SDK ${base.perS.toFixed(0)} calls/s, ${fixed(base.cpuPerCall)} ms; ratios throughput ${fixed(median(throughput))}x ` +
        `(${fixed(Math.min(...throughput))}–${fixed(Math.max(...throughput))}), CPU ${fixed(median(cpu))}x (${fixed(Math.min(...cpu))}–${fixed(Math.max(...cpu))}); ` +
        `rounds: ${rounds.map((_, i) => `${fixed(throughput[i] as number)}/${fixed(cpu[i] as number)}`).join(' ')}`,
    );
    const target = n === 50;
    figures.push(
      figure(`http_n${n}_calls_per_s`, `HTTP N=${n}: calls/s (note + search), median of ${count}`, mine.perS, 'calls/s'),
      figure(`http_n${n}_sdk_calls_per_s`, `  bare stateless SDK server: calls/s`, base.perS, 'calls/s'),
      figure(
        `http_n${n}_throughput_ratio`,
        `  throughput vs the bare SDK server (median)`,
        median(throughput),
        'x',
        target ? atLeast(TARGET.throughput) : undefined,
      ),
      figure(`http_n${n}_throughput_ratio_min`, `    lowest round`, Math.min(...throughput), 'x'),
      figure(`http_n${n}_throughput_ratio_max`, `    highest round`, Math.max(...throughput), 'x'),
      figure(`http_n${n}_cpu_ms_per_call`, `  server CPU per call`, mine.cpuPerCall, 'ms'),
      figure(`http_n${n}_sdk_cpu_ms_per_call`, `  bare SDK server: CPU per call`, base.cpuPerCall, 'ms'),
      figure(`http_n${n}_cpu_ratio`, `  CPU per call vs the bare SDK server (median)`, median(cpu), 'x', target ? atMost(TARGET.cpu) : undefined),
      figure(`http_n${n}_cpu_ratio_min`, `    lowest round`, Math.min(...cpu), 'x'),
      figure(`http_n${n}_cpu_ratio_max`, `    highest round`, Math.max(...cpu), 'x'),
    );
  }
  return figures;
}
