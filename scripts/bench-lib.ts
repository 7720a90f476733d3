/**
 * What the benchmark's sections share (bench.ts, bench-recall.ts): figures and their report,
 * timing, the servers under test over MCP stdio, and the temp stores.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LlmClient } from '../src/llm/types.js';
import { mapLimit } from '../src/shared/concurrency.js';

/** This checkout: the build under test unless `--baseline` switches to another (systemUnderTest). */
export const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * The build the sections measure: this checkout, or while bench.ts measures a baseline (`--baseline
 * <ref>`), that ref built in a temporary worktree. Sections spawn its `bin/` and load its `src/` (the
 * in-process ones, through `importFrom`); the measurement code, the stores it seeds and the queries are
 * this checkout's, so both builds do the same work.
 */
const sut = { root: REPO };
export const systemUnderTest = (): { root: string; bin: string } => ({
  root: sut.root,
  bin: path.join(sut.root, 'bin', 'live-mem.cjs'),
});
export function measureBuild(root: string): void {
  sut.root = root;
}
/**
 * `--baseline <ref>`'s built worktree, for the sections that interleave both builds round by round
 * themselves (bench-writes.ts) rather than being run once on each; undefined without one.
 */
const baseline: { root?: string } = {};
export const baselineRoot = (): string | undefined => baseline.root;
export function setBaselineRoot(root: string | undefined): void {
  baseline.root = root;
}
/** A module of the build under test, by its path from the repository's root (e.g. `src/core/core.js`). */
export const importFrom = async <T>(relative: string): Promise<T> =>
  (await import(pathToFileURL(path.join(sut.root, relative.replace(/\.js$/, '.ts'))).href)) as T;

/**
 * The official MCP memory server, the peer the benchmark compares with: a pinned devDependency, so
 * `npm ci` brings it and no section fetches anything (the benchmark page runs offline).
 */
const PEER_PACKAGE = '@modelcontextprotocol/server-memory';
const PEER_ENTRY = fileURLToPath(new URL(`../node_modules/${PEER_PACKAGE}/dist/index.js`, import.meta.url));

// ---------------------------------------------------------------------------------------------
// Figures and the report

/** 'ratio' is a bare number (a share, a score). */
export type Unit = 'ms' | 'notes/s' | 'calls/s' | 'x' | 'MiB' | 'KiB' | 'tokens' | 'chars' | 'ratio' | 'packages' | 'bytes';

export interface Target {
  op: '<' | '≤' | '≥';
  limit: number;
}

export interface Figure {
  /** snake_case key for the JSON summary. */
  key: string;
  label: string;
  /** null when the measure is unavailable (e.g. no /proc). */
  value: number | null;
  unit: Unit;
  target: Target | undefined;
}

export const figure = (key: string, label: string, value: number | null, unit: Unit, target?: Target): Figure => ({ key, label, value, unit, target });

/** A figure as printed: with its section's title and, when a baseline was measured, the baseline's value. */
export interface Reported extends Figure {
  section: string;
  baseline?: number | null;
}

export const below = (limit: number): Target => ({ op: '<', limit });
export const atLeast = (limit: number): Target => ({ op: '≥', limit });
export const atMost = (limit: number): Target => ({ op: '≤', limit });

const withUnit = (text: string, unit: Unit): string => (unit === 'x' ? `${text}x` : unit === 'ratio' ? text : `${text} ${unit}`);

/** A measure: a few significant decimals, fewer as the value grows. */
function formatValue(value: number | null, unit: Unit): string {
  if (value === null) return 'n/a';
  // Shares and scores below 1 take three decimals: recall figures differ in the third (0.526 vs 0.521).
  const digits = unit === 'notes/s' || unit === 'packages' || value >= 100 ? 0 : value >= 10 ? 1 : unit === 'ratio' && Math.abs(value) < 1 ? 3 : 2;
  return withUnit(value.toFixed(digits), unit);
}

/** A target: as written in the brief, without trailing zeros. */
const formatTarget = ({ op, limit }: Target, unit: Unit): string => `${op} ${withUnit(String(Number(limit.toPrecision(3))), unit)}`;

function verdict(fig: Figure): string {
  if (!fig.target || fig.value === null) return '';
  const { op, limit } = fig.target;
  const met = op === '<' ? fig.value < limit : op === '≤' ? fig.value <= limit : fig.value >= limit;
  return met ? '✓' : '✗';
}

/** Where the figures come from. The load average is read before the run: a busy machine skews every figure. */
export function describeMachine(): string {
  const load = loadavg()[0]?.toFixed(1) ?? '?';
  return `node ${process.version}, ${availableParallelism()} CPUs, load average ${load} before the run`;
}

/**
 * The machine as a section starts: its load average (1 min) and the disk's fsync time (p50 of 20
 * creations of a 250-byte file, temp + write + fsync + rename). Both move the figures: the note
 * figures follow the fsync time, which swung from 0.7 to 4 ms within one session on a shared VM.
 */
export function machineState(dir: string): { load: number; fsyncMs: number } {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const temp = path.join(dir, `.fsync-probe-${i}.tmp`);
    const start = performance.now();
    const fd = openSync(temp, 'w');
    writeSync(fd, Buffer.alloc(250, 97));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path.join(dir, `fsync-probe-${i}`));
    times.push(performance.now() - start);
  }
  return { load: loadavg()[0] ?? 0, fsyncMs: percentile(times, 50) };
}

/**
 * What `run` cost process `pid` in CPU time per call, in ms: `calls` of them, or as many as its result
 * says; null where the process's CPU time cannot be read.
 */
export async function cpuPerCall<T>(
  pid: number | null,
  run: () => Promise<T>,
  calls: number | ((result: T) => number),
): Promise<{ result: T; cpu: number | null }> {
  const before = cpuMs(pid);
  const result = await run();
  const after = cpuMs(pid);
  const count = typeof calls === 'number' ? calls : calls(result);
  return { result, cpu: before === null || after === null ? null : (after - before) / count };
}

/** The process's CPU time so far (user + system, every thread), in ms; Linux only (null elsewhere). */
export function cpuMs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in ticks of 1/100 s
  } catch {
    return null;
  }
}

/** Each section's title with the machine's state as it started (and the baseline's, when measured). */
export interface SectionState {
  title: string;
  load: number;
  fsyncMs: number;
  baseline?: { load: number; fsyncMs: number; error?: string };
}

export function printReport(figures: readonly Reported[], machine: string, sections: readonly SectionState[] = []): void {
  const withBaseline = figures.some((fig) => fig.baseline !== undefined);
  const rows = figures.map((fig) => ({
    section: fig.section,
    label: fig.label,
    value: formatValue(fig.value, fig.unit),
    baseline: fig.baseline === undefined ? '' : formatValue(fig.baseline, fig.unit),
    target: fig.target ? formatTarget(fig.target, fig.unit) : '—',
    mark: verdict(fig),
  }));
  const width = (column: 'label' | 'value' | 'target' | 'baseline') => Math.max(0, ...rows.map((row) => row[column].length));
  const [labelWidth, valueWidth, targetWidth, baselineWidth] = [width('label'), width('value'), width('target'), Math.max(8, width('baseline'))];
  console.log(`\nlive-mem benchmark (fs driver, MCP stdio; ${machine})`);
  if (withBaseline) console.log(`  ${''.padEnd(labelWidth)}  ${'this'.padStart(valueWidth)}  ${'baseline'.padStart(baselineWidth)}`);
  let section: string | undefined;
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      const state = sections.find((s) => s.title === section);
      const base = state?.baseline;
      const machineNote = state
        ? ` (load ${state.load.toFixed(1)}, fsync ${state.fsyncMs.toFixed(2)} ms${base ? `; baseline: ${base.error ? base.error : `load ${base.load.toFixed(1)}, fsync ${base.fsyncMs.toFixed(2)} ms`}` : ''})`
        : '';
      console.log(`  ${section}${machineNote}`);
    }
    const baseline = withBaseline ? `  ${row.baseline.padStart(baselineWidth)}` : '';
    console.log(
      `    ${row.label.padEnd(labelWidth)}  ${row.value.padStart(valueWidth)}${baseline}  target ${row.target.padEnd(targetWidth)}  ${row.mark}`.trimEnd(),
    );
  }
}

export function printJsonSummary(figures: readonly Reported[], sections: readonly SectionState[] = []): void {
  const round = (value: number | null, unit: Unit) =>
    value === null ? null : unit === 'ratio' ? Math.round(value * 1000) / 1000 : Math.round(value * 100) / 100;
  const entries: Array<[string, number | null]> = [];
  for (const fig of figures) {
    entries.push([fig.key, round(fig.value, fig.unit)]);
    if (fig.baseline !== undefined) entries.push([`${fig.key}_baseline`, round(fig.baseline, fig.unit)]);
  }
  sections.forEach((state, i) => {
    entries.push([`section_${i}_load`, round(state.load, 'ratio')], [`section_${i}_fsync_ms`, round(state.fsyncMs, 'ms')]);
  });
  console.log(JSON.stringify(Object.fromEntries(entries)));
}

export const progress = (message: string): void => void process.stderr.write(`[bench] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Measuring

/** Nearest-rank percentile of `values` (not necessarily sorted). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const value = sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
  if (value === undefined) throw new Error('percentile of no values');
  return value;
}

export async function timeMs(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

export interface CallTimings {
  totalMs: number;
  latenciesMs: number[];
}

/** Runs `call(0..count-1)` with at most `inFlight` calls pending, timing each call and the whole. */
export async function timeCalls(count: number, inFlight: number, call: (index: number) => Promise<unknown>): Promise<CallTimings> {
  const indices = Array.from({ length: count }, (_, index) => index);
  const start = performance.now();
  const latenciesMs = await mapLimit(indices, inFlight, (index) => timeMs(() => call(index)));
  return { totalMs: performance.now() - start, latenciesMs };
}

/** The process's peak resident set size in MiB, from /proc (null elsewhere). */
export async function peakRssMiB(pid: number | null): Promise<number | null> {
  if (pid === null) return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status)?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The server under test

export interface BenchServer {
  pid: number | null;
  /** Spawn to `initialize` answered. */
  connectMs: number;
  /** Calls a tool; throws on a tool error; returns its structuredContent. */
  call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The tools/list result, as the client received it. */
  listTools(): Promise<unknown>;
  close(): Promise<void>;
}

/** How to spawn a server over stdio: live-mem, or the peer. */
export interface ServerSpec {
  args: string[];
  env: (home: string) => Record<string, string>;
}

/** live-mem over stdio: the build under test's executable (`args` is read when a server is spawned). */
export const LIVE_MEM: ServerSpec = {
  get args() {
    return [systemUnderTest().bin];
  },
  env: (home) => ({ LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'bench', LIVE_MEM_LOG_LEVEL: 'warn' }),
};
export const PEER: ServerSpec = { args: [PEER_ENTRY], env: (home) => ({ MEMORY_FILE_PATH: path.join(home, 'memory.jsonl') }) };

export async function startServer(home: string, spec: ServerSpec = LIVE_MEM): Promise<BenchServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: spec.args,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...spec.env(home) },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'live-mem-bench', version: '0.0.0' });
  const connectMs = await timeMs(() => client.connect(transport));
  return {
    pid: transport.pid,
    connectMs,
    async call(tool, args) {
      const result = await client.callTool({ name: tool, arguments: args });
      const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(structured)}`);
      return structured;
    },
    listTools: () => client.listTools(),
    close: () => client.close(),
  };
}

/**
 * The temp stores, one per section, removed together once every section ran: deleting tens of
 * thousands of files mid-run would tax the next section (on a disk mounted with online discard,
 * for a minute or so).
 */
const tempHomes: string[] = [];

export async function freshHome(section: string): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), `live-mem-bench-${section}-`));
  tempHomes.push(home);
  return home;
}

export async function removeTempHomes(): Promise<void> {
  await Promise.all(tempHomes.splice(0).map((home) => rm(home, { recursive: true, force: true })));
}

export async function withServer<T>(home: string, run: (server: BenchServer) => Promise<T>, spec: ServerSpec = LIVE_MEM): Promise<T> {
  const server = await startServer(home, spec);
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Whether the peer is installed (`npm ci` brings it: a devDependency); a section without it prints no comparison. */
export async function peerAvailable(): Promise<boolean> {
  try {
    await access(PEER_ENTRY);
    return true;
  } catch {
    progress(`  ${PEER_PACKAGE} is not in node_modules (a devDependency: \`npm ci\` brings it); no comparison`);
    return false;
  }
}

/** A client that adds up the time spent inside the model's calls. */
export function timedModel(llm: LlmClient): LlmClient & { spentMs: number } {
  const wrapper = {
    ...llm,
    spentMs: 0,
    async chat(request: Parameters<LlmClient['chat']>[0]) {
      const start = performance.now();
      try {
        return await llm.chat(request);
      } finally {
        wrapper.spentMs += performance.now() - start;
      }
    },
  };
  return wrapper;
}
