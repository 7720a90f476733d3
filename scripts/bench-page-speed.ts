/**
 * The benchmark page's speed and memory: one session's work over MCP stdio — N notes written, then S
 * searches over them — sent to three servers, each spawned fresh for the session and kept for all of
 * it (stateful, one per session, never one per request):
 * - live-mem (the build's bin/), `live_note` (a file fsynced before the answer) then `live_search`;
 * - the official MCP memory server (@modelcontextprotocol/server-memory, a pinned devDependency),
 *   `create_entities` with one entity per note (its whole graph rewritten to one JSON-lines file, not
 *   fsynced) then `search_nodes`;
 * - a bare server on the MCP SDK doing live-mem's work and nothing else (scripts/minimal-note-server.mjs
 *   `sdk`): the same note file, fsynced, then `live_search` over the notes it holds in memory, the newest
 *   first, stopping one past the limit as live-mem does (the two must find as many notes per query).
 * Notes `fact i about component-(i % 97)`, queries `component-j` (limit 20), as issue 43 has them.
 * Rounds interleave the servers, in a rotated order each round; per server the median over rounds of
 * its wall p50 per call, its CPU per call (the server process's threads' time on a CPU, from
 * /proc/<pid>/task/<tid>/schedstat, in nanoseconds: the 10 ms ticks of /proc/<pid>/stat are too coarse
 * for calls of a tenth of a millisecond) and its peak resident set (VmHWM), with the machine's load as
 * the block started and ended.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { checked } from './bench-page-figures.js';
import {
  type BenchServer,
  cpuMs,
  freshHome,
  LIVE_MEM,
  PEER,
  peakRssMiB,
  peerAvailable,
  percentile,
  progress,
  type ServerSpec,
  withServer,
} from './bench-lib.js';

const MINIMAL_SERVER = fileURLToPath(new URL('./minimal-note-server.mjs', import.meta.url));
const SDK: ServerSpec = { args: [MINIMAL_SERVER], env: () => ({}) };
const SPACE = 'page';
const SEARCH_LIMIT = 20;
const COMPONENTS = 97;

export interface SpeedSize {
  notes: number;
  searches: number;
  rounds: number;
}
export const SPEED_FULL: SpeedSize = { notes: 2_000, searches: 200, rounds: 3 };
export const SPEED_SMALL: SpeedSize = { notes: 150, searches: 40, rounds: 1 };

export type ServerName = 'live-mem' | 'official memory server' | 'bare SDK server';
export const SERVER_NAMES: readonly ServerName[] = ['live-mem', 'official memory server', 'bare SDK server'];

/** One server's session, as the three do it. */
interface Arm {
  name: ServerName;
  spec: (home: string) => ServerSpec;
  setup(server: BenchServer): Promise<unknown>;
  write(server: BenchServer, i: number): Promise<unknown>;
  /** The notes found (the total of a live_search, the entities of a search_nodes). */
  search(server: BenchServer, query: string): Promise<number>;
}

const content = (i: number) => `fact ${i} about component-${i % COMPONENTS}`;
const query = (j: number) => `component-${(j * 7) % COMPONENTS}`;

const liveSearch = async (server: BenchServer, q: string) =>
  ((await server.call('live_search', { space_id: SPACE, query: q, limit: SEARCH_LIMIT })) as { total: number }).total;

const ARMS: readonly Arm[] = [
  {
    name: 'live-mem',
    spec: () => LIVE_MEM,
    setup: (server) => server.call('space_create', { space_id: SPACE }),
    write: (server, i) => server.call('live_note', { space_id: SPACE, category: 'observation', content: content(i) }),
    search: liveSearch,
  },
  {
    name: 'official memory server',
    spec: () => PEER,
    setup: async () => undefined,
    write: (server, i) => server.call('create_entities', { entities: [{ name: `fact-${i}`, entityType: 'note', observations: [content(i)] }] }),
    search: async (server, q) => ((await server.call('search_nodes', { query: q })) as { entities: unknown[] }).entities.length,
  },
  {
    name: 'bare SDK server',
    spec: (home) => ({ args: [...SDK.args, `${home}/live`, 'sdk'], env: SDK.env }),
    setup: async () => undefined,
    write: (server, i) => server.call('live_note', { space_id: SPACE, category: 'observation', content: content(i) }),
    search: liveSearch,
  },
];

/** Time on a CPU of every thread of `pid` so far, in ms (from schedstat); the stat's ticks where schedstat is missing. */
function onCpuMs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return cpuMs(pid);
  }
}

/** One session's measures. */
interface Session {
  writeP50: number;
  writeCpu: number | null;
  searchP50: number;
  searchCpu: number | null;
  peakRss: number | null;
  found: number[];
}

/** A server's figures: medians over the rounds (null where /proc could not be read). */
export interface ServerSpeed {
  writeP50: number;
  writeCpu: number | null;
  searchP50: number;
  searchCpu: number | null;
  peakRss: number | null;
}

export interface SpeedRun {
  size: SpeedSize;
  servers: Map<ServerName, ServerSpeed>;
  load: { start: number; end: number };
}

async function session(arm: Arm, size: SpeedSize): Promise<Session> {
  const home = await freshHome(`page-speed-${arm.name.replace(/\W+/g, '-')}`);
  return withServer(
    home,
    async (server) => {
      await arm.setup(server);
      const phase = async (count: number, call: (i: number) => Promise<unknown>) => {
        const times: number[] = [];
        const before = onCpuMs(server.pid);
        for (let i = 0; i < count; i++) {
          const started = performance.now();
          await call(i);
          times.push(performance.now() - started);
        }
        const after = onCpuMs(server.pid);
        return { p50: percentile(times, 50), cpu: before === null || after === null ? null : (after - before) / count };
      };
      const writes = await phase(size.notes, (i) => arm.write(server, i));
      const found: number[] = [];
      const searches = await phase(size.searches, async (j) => found.push(await arm.search(server, query(j))));
      return { writeP50: writes.p50, writeCpu: writes.cpu, searchP50: searches.p50, searchCpu: searches.cpu, peakRss: await peakRssMiB(server.pid), found };
    },
    arm.spec(home),
  );
}

const medianOf = (values: ReadonlyArray<number | null>): number | null => (values.some((value) => value === null) ? null : percentile(values as number[], 50));

/** The three servers' sessions, interleaved round by round; throws when the peer is not installed or a reference finds other notes. */
export async function benchSpeed(size: SpeedSize): Promise<SpeedRun> {
  if (!(await peerAvailable())) throw new Error('benchmark page: the official memory server is not installed (`npm ci` brings it)');
  const start = loadavg()[0] ?? 0;
  const sessions = new Map<ServerName, Session[]>(SERVER_NAMES.map((name) => [name, []]));
  for (let round = 0; round < size.rounds; round++) {
    const order = ARMS.map((_, i) => ARMS[(i + round) % ARMS.length] as Arm);
    for (const arm of order) {
      const done = await session(arm, size);
      sessions.get(arm.name)?.push(done);
      progress(
        `  speed round ${round + 1}/${size.rounds}, ${arm.name}: write p50 ${done.writeP50.toFixed(2)} ms, search p50 ${done.searchP50.toFixed(2)} ms (load ${(loadavg()[0] ?? 0).toFixed(1)})`,
      );
    }
  }
  // The same work: the bare server must find, query by query, what live-mem finds.
  const [ours, bare] = [sessions.get('live-mem')?.[0]?.found, sessions.get('bare SDK server')?.[0]?.found];
  if (JSON.stringify(ours) !== JSON.stringify(bare))
    throw new Error(`benchmark page: the bare SDK server found ${JSON.stringify(bare)}, live-mem ${JSON.stringify(ours)}`);
  const servers = new Map<ServerName, ServerSpeed>();
  for (const [name, list] of sessions) {
    servers.set(name, {
      writeP50: medianOf(list.map((s) => s.writeP50)) as number,
      writeCpu: medianOf(list.map((s) => s.writeCpu)),
      searchP50: medianOf(list.map((s) => s.searchP50)) as number,
      searchCpu: medianOf(list.map((s) => s.searchCpu)),
      peakRss: medianOf(list.map((s) => s.peakRss)),
    });
  }
  return { size, servers, load: { start, end: loadavg()[0] ?? 0 } };
}

const SPEED_ROWS: ReadonlyArray<{ label: string; value: (s: ServerSpeed) => number | null; digits: number; not: string }> = [
  {
    label: 'write p50, wall (ms)',
    value: (s) => s.writeP50,
    digits: 2,
    not: 'Durability alike: live-mem and the bare server fsync each note before answering, the official server rewrites its one file and never fsyncs. Nor writes in flight at once (one at a time here), nor another disk: this machine’s, under its load.',
  },
  {
    label: 'write CPU per call, server (ms)',
    value: (s) => s.writeCpu,
    digits: 3,
    not: 'The client’s CPU or the kernel’s work for the disk outside the server’s threads; the median of the rounds, not their spread.',
  },
  {
    label: 'search p50, wall (ms)',
    value: (s) => s.searchP50,
    digits: 2,
    not: 'Ranked search: live_search and the bare server find the newest notes holding the text, search_nodes every entity holding it (no limit), and memory_search (BM25 over everything) is not timed here. Nor a space written by other processes or read after a restart: one session, its own notes.',
  },
  {
    label: 'search CPU per call, server (ms)',
    value: (s) => s.searchCpu,
    digits: 3,
    not: 'A bigger space: the cost of these searches grows with the notes, and this is one session of the size above.',
  },
  {
    label: 'peak resident memory, server (MiB)',
    value: (s) => s.peakRss,
    digits: 1,
    not: 'Memory at rest or with many spaces: the peak of this one session (VmHWM), Node’s own heap and code included, which the three servers share.',
  },
];

/** The speed section of the page: each server's figures, live-mem's over each reference, the load, what each does not show. */
export function speedSection(run: SpeedRun, seconds: number): string[] {
  const { size } = run;
  const load = `${run.load.start.toFixed(1)} → ${run.load.end.toFixed(1)}`;
  const lines = [
    '### Speed and memory: one session against the official memory server and a bare SDK server',
    '',
    `${size.notes.toLocaleString('en')} notes written one at a time, then ${size.searches} searches over them (limit 20), over MCP stdio, each server spawned for the session and kept for all of it; ${size.rounds} round${size.rounds > 1 ? 's' : ''}, the servers interleaved in a rotated order each round, medians over rounds; ${seconds.toFixed(0)} s. A ratio below 1 is live-mem cheaper. CPU per call is the server's CPU time over the phase divided by its calls (a mean, every thread), the wall figure a median: a CPU figure above the wall p50 is a slow tail or a second thread's work.`,
    '',
    `| figure | ${SERVER_NAMES.join(' | ')} | live-mem ÷ official | live-mem ÷ bare SDK | load | what it does not show |`,
    '|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const row of SPEED_ROWS) {
    const values = SERVER_NAMES.map((name) => {
      const server = run.servers.get(name);
      return server ? row.value(server) : null;
    });
    const cells = values.map((value, i) => checked(`${SERVER_NAMES[i]} ${row.label}`, value, row.digits));
    const [ours, official, bare] = values as [number, number, number];
    const ratios = [checked(`${row.label} live-mem ÷ official`, ours / official, 2), checked(`${row.label} live-mem ÷ bare SDK`, ours / bare, 2)];
    lines.push(`| ${row.label} | ${[...cells, ...ratios].join(' | ')} | ${load} | ${row.not} |`);
  }
  return [...lines, ''];
}
