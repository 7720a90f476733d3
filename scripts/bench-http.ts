/**
 * Section 17 of the benchmark: `live-mem serve --http` against the bare stateless SDK server doing the
 * same work (scripts/minimal-http-server.mjs), each a process on 127.0.0.1 with a fresh store. For
 * N = 10, 50 and 200 concurrent clients (the SDK's Client over Streamable HTTP, one token), each
 * client calls live_note then memory_search over and over for HTTP_RUN_MS, in HTTP_ROUNDS rounds:
 * calls/s and the server process's CPU per call (user + system, /proc), medians; and live-mem's
 * ratios to the bare server, each the median of the rounds' ratios (a round measures both servers
 * one after the other, so on a shared machine they see about the same load). Targets at N = 50:
 * ≥ 0.9× the throughput, ≤ 1.2× the CPU per call.
 *
 *   LIVE_MEM_BENCH_BIN=<path to bin/live-mem.cjs>   measures another build (e.g. the one before a change)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { atLeast, below, BIN, figure, freshHome, progress, type Figure } from './bench-lib.js';

const CLIENTS = [10, 50, 200] as const;
const HTTP_RUN_MS = 3_000;
const HTTP_ROUNDS = 3;
const MINIMAL = fileURLToPath(new URL('./minimal-http-server.mjs', import.meta.url));
const TARGET = { throughput: 0.9, cpu: 1.2 } as const;

interface Served {
  url: string;
  token: string;
  child: ChildProcess;
}

/** The process's CPU time so far (user + system), in ms; Linux only. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in ticks of 1/100 s
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

async function startLiveMem(): Promise<Served> {
  const home = await freshHome('http');
  const core = createCore({ storage: createFsDriver(home) });
  const owner = ownerCaller('owner');
  await core.spaces.create(owner, { space_id: 'bench' });
  const { token } = await core.auth.create(owner, { name: 'bench', permissions: 'read,write', space_ids: 'bench' });
  const bin = process.env.LIVE_MEM_BENCH_BIN ?? BIN;
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
  return { url: await started(child, 'stderr', /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/), token, child };
}

async function startMinimal(): Promise<Served> {
  const home = await freshHome('http-minimal');
  const child = spawn(process.execPath, [MINIMAL, home], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await started(child, 'stdout', /listening (\d+)/);
  return { url: `http://127.0.0.1:${port}/mcp`, token: 'none', child };
}

/** N clients calling note + search for HTTP_RUN_MS: calls/s and the server's CPU ms per call. */
interface Measure {
  perS: number;
  cpuPerCall: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function load(served: Served, clients: number): Promise<Measure> {
  const connected = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new Client({ name: 'bench-http', version: '0' });
      const headers = { authorization: `Bearer ${served.token}` };
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers } }));
      return client;
    }),
  );
  let calls = 0;
  const round = async (client: Client, i: number) => {
    for (const [name, args] of [
      ['live_note', { space_id: 'bench', category: 'progress', content: `step ${i}: the deploy pipeline now caches layers` }],
      ['memory_search', { space_id: 'bench', query: 'deploy pipeline', limit: 5 }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 200)}`);
      calls++;
    }
  };
  await Promise.all(connected.map((client, c) => round(client, c))); // warm-up
  calls = 0;
  const pid = served.child.pid as number;
  const cpuBefore = cpuMs(pid);
  const start = performance.now();
  const end = start + HTTP_RUN_MS;
  await Promise.all(
    connected.map(async (client, c) => {
      for (let i = 0; performance.now() < end; i++) await round(client, c * 1_000_000 + i);
    }),
  );
  const elapsed = performance.now() - start;
  const cpu = cpuMs(pid) - cpuBefore;
  await Promise.all(connected.map((client) => client.close()));
  return { perS: (calls * 1000) / elapsed, cpuPerCall: cpu / calls };
}

export async function benchHttp(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const ours = await startLiveMem();
  const bare = await startMinimal();
  try {
    for (const n of CLIENTS) {
      // Rounds alternate which server goes first; the figures are the medians.
      const rounds: Array<{ base: Measure; mine: Measure }> = [];
      for (let r = 0; r < HTTP_ROUNDS; r++) {
        if (r % 2 === 0) rounds.push({ base: await load(bare, n), mine: await load(ours, n) });
        else rounds.push({ mine: await load(ours, n), base: await load(bare, n) });
      }
      const base = { perS: median(rounds.map((x) => x.base.perS)), cpuPerCall: median(rounds.map((x) => x.base.cpuPerCall)) };
      const mine = { perS: median(rounds.map((x) => x.mine.perS)), cpuPerCall: median(rounds.map((x) => x.mine.cpuPerCall)) };
      const ratios = rounds.map((x) => `${(x.mine.perS / x.base.perS).toFixed(2)}x/${(x.mine.cpuPerCall / x.base.cpuPerCall).toFixed(2)}x`);
      progress(
        `  N=${n}: live-mem ${mine.perS.toFixed(0)} calls/s, ${mine.cpuPerCall.toFixed(2)} ms CPU/call; bare SDK ${base.perS.toFixed(0)} calls/s, ${base.cpuPerCall.toFixed(2)} ms (medians; rounds, throughput/CPU ratios: ${ratios.join(' ')})`,
      );
      const target = n === 50;
      figures.push(
        figure(`http_n${n}_calls_per_s`, `HTTP N=${n}: calls/s (note + search)`, mine.perS, 'calls/s'),
        figure(`http_n${n}_sdk_calls_per_s`, `  bare stateless SDK server: calls/s`, base.perS, 'calls/s'),
        figure(
          `http_n${n}_throughput_ratio`,
          `  throughput vs the bare SDK server`,
          median(rounds.map((x) => x.mine.perS / x.base.perS)),
          'x',
          target ? atLeast(TARGET.throughput) : undefined,
        ),
        figure(`http_n${n}_cpu_ms_per_call`, `  server CPU per call`, mine.cpuPerCall, 'ms'),
        figure(
          `http_n${n}_cpu_ratio`,
          `  CPU per call vs the bare SDK server`,
          median(rounds.map((x) => x.mine.cpuPerCall / x.base.cpuPerCall)),
          'x',
          target ? below(TARGET.cpu) : undefined,
        ),
      );
    }
  } finally {
    ours.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
  }
  return figures;
}
