/**
 * The benchmark's note sections (2, 3, 12, 13): what a durable `live_note` costs, next to the
 * floors measured in the same run on the same disk, and against the official MCP memory server.
 *
 * The floors, measured by this process between rounds of notes so that a noisy disk weighs on
 * both alike:
 * - MCP round trip: `system_whoami` over the same stdio connection (no I/O on the server);
 * - create a file: temp file + write of a 250-byte note + fsync + close + rename, with synchronous
 *   calls, in a folder beside the space's live/ folder (on ext4 a new folder may land in a region
 *   where creating files costs more, after many were deleted there: beside, both pay alike);
 * - append: write of 250 bytes + fdatasync on a file kept open (a log's floor, for reference);
 * A note costs a round trip plus a file creation (a little less where open(2) is slow: live-mem
 * opens the next note's file ahead, see src/storage/fs/create-file.ts): `live_note` p50 is
 * reported as a multiple of that sum. The rounds start once the server has answered 500 notes and
 * 500 round trips, as a server that has been running does (its code compiled by V8).
 *
 * Beside them, in each round, the same notes sent to two references that do nothing but the note
 * (scripts/minimal-note-server.mjs): one written by hand, one on the MCP SDK. They show what part of
 * a note is the protocol's, the SDK's and live-mem's own.
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CATEGORIES } from '../src/core/validate.js';
import { mapLimit } from '../src/shared/concurrency.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { listKeys } from '../src/storage/list.js';
import { ensureS3Bucket, s3TestConfig, s3ProcessEnv, uniqueS3Prefix } from '../test/helpers/s3.js';
import {
  atLeast,
  atMost,
  below,
  cpuPerCall,
  figure,
  freshHome,
  LIVE_MEM,
  PEER,
  peakRssMiB,
  peerAvailable,
  percentile,
  progress,
  startServer,
  timeCalls,
  timeMs,
  withServer,
  type BenchServer,
  type ServerSpec,
  type CallTimings,
  type Figure,
} from './bench-lib.js';

const LATENCY_ROUNDS = 8;
const NOTES_PER_ROUND = 250;
const FLOOR_SAMPLES_PER_ROUND = 150;
/** Notes and round trips before the measured rounds: a server that has been running (its code compiled by V8). */
const WARM_UP_CALLS = 500;
const FLOOR_BODY = 'x'.repeat(250);
const TARGET_VS_FLOOR = 1.3;
const NOTE_P50_MS = 3;
const PIPELINE_IN_FLIGHT = 32;
/** Runs of each append figure (the median is reported); the peer's 10,000 takes minutes, so once. */
const APPEND_RUNS = [
  { count: 2_000, runs: 3, sequentialTarget: 2.5, pipelinedTarget: 10 },
  { count: 10_000, runs: 1, sequentialTarget: 3, pipelinedTarget: 10 },
] as const;
const PROCESSES = 8;
const NOTES_PER_PROCESS = 1_000;
const S3_NOTES = 500;

const noteContent = (index: number): string => `Bench note ${index}: the token refresh path retries twice before surfacing the error to the caller.`;

export const noteArgs = (spaceId: string, index: number) => ({
  space_id: spaceId,
  category: CATEGORIES[index % CATEGORIES.length] ?? 'observation',
  content: noteContent(index),
  tags: 'bench,perf',
});

const median = (values: readonly number[]): number => percentile(values, 50);

async function appendNotes(server: BenchServer, spaceId: string, count: number, inFlight: number): Promise<CallTimings> {
  await server.call('space_create', { space_id: spaceId });
  return timeCalls(count, inFlight, (index) => server.call('live_note', noteArgs(spaceId, index)));
}

/** The peer's append: one fact per call, as one entity with one observation. */
async function appendFacts(server: BenchServer, count: number): Promise<CallTimings> {
  return timeCalls(count, 1, (index) =>
    server.call('create_entities', { entities: [{ name: `fact-${index}`, entityType: 'note', observations: [noteContent(index)] }] }),
  );
}

// ---------------------------------------------------------------------------------------------
// Floors

/**
 * p50 of `samples` durable file creations (temp + write + fsync + close + rename) in `dir`, numbered
 * from `first`: one folder gathers every round's files, as a space's live/ folder gathers notes.
 */
function fileCreateFloorMs(dir: string, first: number, samples: number): number {
  mkdirSync(dir, { recursive: true });
  const times: number[] = [];
  for (let i = first; i < first + samples; i++) {
    const start = performance.now();
    const temp = path.join(dir, `${i}.tmp`);
    const fd = openSync(temp, 'wx');
    writeSync(fd, FLOOR_BODY);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path.join(dir, `${i}.md`));
    times.push(performance.now() - start);
  }
  return median(times);
}

/** p50 of `samples` appends of 250 bytes + fdatasync to one open file. */
function appendFloorMs(file: string, samples: number): number {
  const fd = openSync(file, 'a');
  try {
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const start = performance.now();
      writeSync(fd, FLOOR_BODY);
      fdatasyncSync(fd);
      times.push(performance.now() - start);
    }
    return median(times);
  } finally {
    closeSync(fd);
  }
}

/**
 * The references: the same note from scripts/minimal-note-server.mjs, a server that does nothing
 * else, written by hand or on the MCP SDK. Each round sends each server its notes back to back,
 * in a turning order, so that a drifting disk weighs on all alike.
 */
const MINIMAL_SERVER = fileURLToPath(new URL('./minimal-note-server.mjs', import.meta.url));
const REFERENCES = [
  { key: 'by_hand', mode: 'by-hand', label: 'a server written by hand' },
  { key: 'sdk', mode: 'sdk', label: 'a bare MCP SDK server' },
] as const;
type ReferenceKey = (typeof REFERENCES)[number]['key'];
const minimalServer = (dir: string, mode: string): ServerSpec => ({ args: [MINIMAL_SERVER, dir, mode], env: () => ({}) });

async function roundTripFloorMs(server: BenchServer, samples: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) times.push(await timeMs(() => server.call('system_whoami', {})));
  return median(times);
}

// ---------------------------------------------------------------------------------------------
// Sections

/** Section 2: sequential live_note in rounds, each beside freshly measured floors. */
export async function benchNoteLatency(): Promise<Figure[]> {
  const home = await freshHome('latency');
  return withServer(home, async (server) => {
    await server.call('space_create', { space_id: 'latency' });
    // Beside the space's live/ folder: the same disk region, so the same inode and block allocation.
    const floorDir = path.join(home, 'latency', 'floor');
    type Round = { note: number; trip: number; create: number; append: number } & Record<ReferenceKey, number>;
    const rounds: Round[] = [];
    const all: number[] = [];
    const references = await Promise.all(REFERENCES.map((ref) => startServer(home, minimalServer(path.join(home, 'latency', ref.key), ref.mode))));
    try {
      for (let i = 0; i < WARM_UP_CALLS; i++) {
        for (const each of [server, ...references]) {
          await each.call('live_note', noteArgs('latency', i));
          await each.call('system_whoami', {});
        }
      }
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        const trip = await roundTripFloorMs(server, FLOOR_SAMPLES_PER_ROUND);
        const create = fileCreateFloorMs(floorDir, round * FLOOR_SAMPLES_PER_ROUND, FLOOR_SAMPLES_PER_ROUND);
        const append = appendFloorMs(path.join(home, 'floor.log'), FLOOR_SAMPLES_PER_ROUND);
        // Each server's notes back to back, as a client writing notes sends them; which goes first turns each round.
        const servers = [server, ...references];
        const times: number[][] = servers.map(() => []);
        for (let turn = 0; turn < servers.length; turn++) {
          const which = (round + turn) % servers.length;
          const offset = WARM_UP_CALLS + round * NOTES_PER_ROUND;
          const each = servers[which] as BenchServer;
          times[which] = (await timeCalls(NOTES_PER_ROUND, 1, (index) => each.call('live_note', noteArgs('latency', offset + index)))).latenciesMs;
        }
        const [own = [], byHand = [], sdk = []] = times;
        all.push(...own);
        rounds.push({ note: median(own), trip, create, append, by_hand: median(byHand), sdk: median(sdk) });
      }
    } finally {
      await Promise.all(references.map((reference) => reference.close()));
    }
    const notes = LATENCY_ROUNDS * NOTES_PER_ROUND;
    const of = (pick: (round: (typeof rounds)[number]) => number) => median(rounds.map(pick));
    return [
      figure(
        'live_note_p50_ms',
        `live_note p50 (${notes.toLocaleString('en')} sequential, median of ${LATENCY_ROUNDS} rounds)`,
        of((r) => r.note),
        'ms',
        below(NOTE_P50_MS),
      ),
      figure('live_note_p99_ms', 'live_note p99', percentile(all, 99), 'ms'),
      figure('live_note_per_s', 'live_note throughput (one at a time)', (notes / all.reduce((sum, ms) => sum + ms, 0)) * 1000, 'notes/s'),
      figure(
        'floor_mcp_round_trip_ms',
        '  floor: MCP round trip (system_whoami) p50',
        of((r) => r.trip),
        'ms',
      ),
      figure(
        'floor_file_create_ms',
        '  floor: temp + write + fsync + rename, 250 B, p50',
        of((r) => r.create),
        'ms',
      ),
      figure(
        'floor_append_fdatasync_ms',
        '  floor: append + fdatasync, 250 B, p50',
        of((r) => r.append),
        'ms',
      ),
      figure(
        'live_note_vs_floor',
        '  live_note p50 / (round trip + file create)',
        of((r) => r.note / (r.trip + r.create)),
        'x',
        atMost(TARGET_VS_FLOOR),
      ),
      ...REFERENCES.flatMap((ref) => [
        figure(
          `reference_${ref.key}_note_ms`,
          `  reference: the note from ${ref.label}, p50`,
          of((r) => r[ref.key]),
          'ms',
        ),
        figure(
          `reference_${ref.key}_vs_floor`,
          '    its p50 / (round trip + file create)',
          of((r) => r[ref.key] / (r.trip + r.create)),
          'x',
        ),
      ]),
      figure(
        'live_note_vs_sdk',
        "  live_note p50 / the bare SDK server's",
        of((r) => r.note / r.sdk),
        'x',
      ),
    ];
  });
}

/** The peer's sequential append time for `count` facts (median of `runs`), or null without it. */
async function peerAppendMs(count: number, runs: number): Promise<number | null> {
  if (!(await peerAvailable())) return null;
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    progress(`  MCP memory server: append ${count} sequential (${run + 1}/${runs})`);
    const home = await freshHome('peer');
    times.push((await withServer(home, (server) => appendFacts(server, count), PEER)).totalMs);
  }
  return median(times);
}

/** Sections 3 and 5: append throughput on one connection, against the peer, then the server's peak RSS. */
export async function benchAppendThroughput(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const peers = new Map<number, number | null>();
  for (const run of APPEND_RUNS) peers.set(run.count, await peerAppendMs(run.count, run.runs));
  const home = await freshHome('append');
  await withServer(home, async (server) => {
    for (const run of APPEND_RUNS) {
      const peerMs = peers.get(run.count) ?? null;
      const label = run.count.toLocaleString('en');
      figures.push(figure(`peer_append_${run.count}_ms`, `MCP memory server: ${label} facts, sequential (median of ${run.runs})`, peerMs, 'ms'));
      for (const [mode, inFlight, target] of [
        ['sequential', 1, run.sequentialTarget],
        ['pipelined', PIPELINE_IN_FLIGHT, run.pipelinedTarget],
      ] as const) {
        const times: number[] = [];
        const cpu: number[] = [];
        for (let attempt = 0; attempt < run.runs; attempt++) {
          progress(`  append ${run.count} ${mode} (${attempt + 1}/${run.runs})`);
          const appended = await cpuPerCall(server.pid, () => appendNotes(server, `append-${mode}-${run.count}-${attempt}`, run.count, inFlight), run.count);
          times.push(appended.result.totalMs);
          if (appended.cpu !== null) cpu.push(appended.cpu);
        }
        const ms = median(times);
        const key = `append_${run.count}_${mode}`;
        const how = mode === 'sequential' ? 'sequential' : `${inFlight} in flight`;
        figures.push(
          figure(`${key}_ms`, `  live-mem: ${label} notes, ${how}`, ms, 'ms', peerMs === null ? undefined : below(peerMs / target)),
          figure(`${key}_per_s`, '    throughput', (run.count / ms) * 1000, 'notes/s'),
          figure(`${key}_cpu_ms`, '    server CPU per note', cpu.length > 0 ? median(cpu) : null, 'ms'),
          figure(`${key}_speedup`, '    speed-up vs MCP memory server', peerMs === null ? null : peerMs / ms, 'x', atLeast(target)),
        );
      }
    }
    figures.push(figure('server_peak_rss_mib', 'server peak RSS (VmHWM, end of section 3)', await peakRssMiB(server.pid), 'MiB'));
  });
  return figures;
}

/** Section 12: several processes writing into one space at once; every note must be there. */
export async function benchProcesses(): Promise<Figure[]> {
  const home = await freshHome('processes');
  const servers = await Promise.all(
    Array.from({ length: PROCESSES }, (_, p) => startServer(home, { ...LIVE_MEM, env: (dir) => ({ ...LIVE_MEM.env(dir), LIVE_MEM_AGENT: `proc-${p}` }) })),
  );
  try {
    await servers[0]?.call('space_create', { space_id: 'shared' });
    const start = performance.now();
    await Promise.all(
      servers.map((server, p) =>
        timeCalls(NOTES_PER_PROCESS, 1, (index) => server.call('live_note', { ...noteArgs('shared', index), content: `process ${p} note ${index}` })),
      ),
    );
    const ms = performance.now() - start;
    const keys = await listKeys(createFsDriver(home), 'shared/live/');
    const storage = createFsDriver(home);
    const bodies = await mapLimit(keys, 16, async (key) => (await storage.get(key))?.body.toString('utf8') ?? '');
    const expected = PROCESSES * NOTES_PER_PROCESS;
    const present = new Set<string>();
    for (const body of bodies) {
      const match = /process (\d+) note (\d+)/.exec(body);
      if (match) present.add(match[0]);
    }
    const total = PROCESSES * NOTES_PER_PROCESS;
    return [
      figure(
        'processes_notes_present',
        `${PROCESSES} processes × ${NOTES_PER_PROCESS.toLocaleString('en')} notes at once: notes present`,
        present.size,
        'ratio',
        atLeast(expected),
      ),
      figure('processes_ms', '  wall time', ms, 'ms'),
      figure('processes_per_s', '  throughput, all processes together', (total / ms) * 1000, 'notes/s'),
    ];
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
}

/** Section 13: live_note on radosgw (when LIVE_MEM_TEST_S3_ENDPOINT points at one), beside a bare PUT's round trip. */
export async function benchS3Note(): Promise<Figure[]> {
  const config = s3TestConfig();
  if (!config) {
    progress('  skipped: LIVE_MEM_TEST_S3_ENDPOINT is not set (bash scripts/ceph-up.sh prints it)');
    return [];
  }
  await ensureS3Bucket(config);
  const prefix = uniqueS3Prefix('bench');
  const client = new S3Client({
    endpoint: config.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
  });
  try {
    const puts: number[] = [];
    for (let i = 0; i < 200; i++) {
      puts.push(
        await timeMs(() => client.send(new PutObjectCommand({ Bucket: config.bucket, Key: `${prefix}floor/${i}.md`, Body: FLOOR_BODY, IfNoneMatch: '*' }))),
      );
    }
    const home = await freshHome('s3');
    const spec = { ...LIVE_MEM, env: (dir: string) => ({ ...LIVE_MEM.env(dir), ...s3ProcessEnv(config, prefix) }) };
    const { latenciesMs } = await withServer(home, (server) => appendNotes(server, 's3bench', S3_NOTES, 1), spec);
    const put = median(puts);
    const note = median(latenciesMs);
    return [
      figure('s3_live_note_p50_ms', `live_note p50 on radosgw (${S3_NOTES} sequential)`, note, 'ms'),
      figure('s3_floor_put_ms', '  floor: one PUT If-None-Match of 250 B, p50', put, 'ms'),
      figure('s3_live_note_vs_put', '  live_note p50 / PUT p50', note / put, 'x'),
    ];
  } finally {
    client.destroy();
  }
}
