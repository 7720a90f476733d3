/**
 * Section 26 of the benchmark (run by bench.ts): what the change feed (src/core/feed/) costs to watch
 * a space where nothing happens, per hour at the default interval.
 *
 * - fs: CPU. SPACES spaces of NOTES notes each (seeded through the core), each checked FS_CHECKS times
 *   in a row per round (process.cpuUsage, user + system: the stats are system time): the median of the
 *   rounds is one idle space's check, times the checks of an hour at 1,000 ms
 *   (DEFAULT_WATCH_INTERVAL_MS.versions); beside it, the store calls a check makes, and the same check
 *   through the feed's timer at INTERVAL_MS, in rounds alternating with rounds watching nothing.
 * - S3 (radosgw, when LIVE_MEM_TEST_S3_ENDPOINT is set): requests. One space of NOTES notes, watched
 *   for CHECKS checks, every call to the driver counted (each is one request): requests per idle check
 *   (a HEAD of the space's change marker) and per full check (the marker moved, or the minute's listing
 *   for writers that keep no marker), per hour at 5,000 ms (DEFAULT_WATCH_INTERVAL_MS.listings) with one
 *   full check a minute; the CPU of a check; and what the markers cost a writer: a note's write p50 (its
 *   marker written after it, not awaited) beside a bare PUT, and the PUTs per spaced note.
 * fs needs no marker (folder versions): nothing is added to its writes. The load average is printed
 * beside each figure: a busy machine skews CPU time.
 */
import { loadavg } from 'node:os';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { DEFAULT_WATCH_INTERVAL_MS } from '../src/core/feed/change-feed.js';
import { createSpaceProbe, FULL_CHECK_MS } from '../src/core/feed/space-probe.js';
import { FINE_SETTLE_MS } from '../src/storage/fs/folder-version.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { listKeys } from '../src/storage/list.js';
import { createS3Driver } from '../src/storage/s3/s3-driver.js';
import type { StorageDriver } from '../src/storage/types.js';
import { ensureS3Bucket, s3DriverOptions, s3TestConfig, uniqueS3Prefix } from '../test/helpers/s3.js';
import { type Figure, figure, freshHome, percentile, progress } from './bench-lib.js';

const SPACES = 10;
const NOTES = 200;
const INTERVAL_MS = 20;
const ROUND_MS = 3_000;
const ROUNDS = 5;
const CHECKS = 20;
const FS_CHECKS = 500;
const WRITES = 60;
const HOUR_MS = 3_600_000;
const owner = ownerCaller('bench');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => (loadavg()[0] ?? 0).toFixed(1);
const cpuMsOf = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

/** A driver that counts every call (each one a request on S3, a syscall or two on fs). */
function counted(driver: StorageDriver): { driver: StorageDriver; calls: () => number; byMethod: Record<string, number> } {
  const byMethod: Record<string, number> = {};
  const wrapped = Object.create(driver) as StorageDriver;
  for (const method of ['get', 'stat', 'list', 'put', 'delete', 'deleteMany', 'version'] as const) {
    const original = driver[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!original) continue;
    (wrapped as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      byMethod[method] = (byMethod[method] ?? 0) + 1;
      return original.apply(driver, args);
    };
  }
  return { driver: wrapped, calls: () => Object.values(byMethod).reduce((a, b) => a + b, 0), byMethod };
}

async function seed(storage: StorageDriver, spaces: number): Promise<string[]> {
  const core = createCore({ storage });
  const ids = Array.from({ length: spaces }, (_, i) => `idle-${i}`);
  for (const id of ids) {
    await core.spaces.create(owner, { space_id: id });
    for (let n = 0; n < NOTES; n++) await core.notes.write(owner, { space_id: id, category: 'observation', content: `idle note ${n} of ${id}` });
  }
  return ids;
}

async function benchFs(): Promise<Figure[]> {
  const home = await freshHome('feed');
  const storage = createFsDriver(home);
  const ids = await seed(storage, SPACES);
  const { driver, calls } = counted(storage);
  const probes = ids.map((id) => createSpaceProbe(driver, id, () => new Date()));
  for (const probe of probes) await probe.check(); // the baselines
  await sleep(FINE_SETTLE_MS * 2); // the folders' versions vouched for
  const perCheck: number[] = [];
  let callsPerCheck = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const before = calls();
    const start = process.cpuUsage();
    for (let i = 0; i < FS_CHECKS; i++) for (const probe of probes) await probe.check();
    const cpuMs = cpuMsOf(process.cpuUsage(start));
    callsPerCheck = (calls() - before) / (FS_CHECKS * probes.length);
    perCheck.push(cpuMs / (FS_CHECKS * probes.length));
    progress(`  fs round ${round + 1}: ${FS_CHECKS * probes.length} checks, ${cpuMs.toFixed(1)} ms CPU (load ${load()})`);
  }
  // The feed's own timer around the checks: watching the spaces at INTERVAL_MS, in rounds alternating with rounds watching nothing.
  const core = createCore({ storage: driver, watchIntervalMs: INTERVAL_MS });
  const overhead: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const idleStart = process.cpuUsage();
    await sleep(ROUND_MS);
    const idleMs = cpuMsOf(process.cpuUsage(idleStart));
    const subscription = core.feed.subscribe(ids, () => undefined);
    await subscription.ready;
    const before = calls();
    const start = process.cpuUsage();
    await sleep(ROUND_MS);
    const watchingMs = cpuMsOf(process.cpuUsage(start));
    const checks = (calls() - before) / callsPerCheck;
    subscription.unsubscribe();
    overhead.push((watchingMs - idleMs) / checks);
    progress(
      `  fs feed round ${round + 1}: ${checks.toFixed(0)} checks, ${(watchingMs - idleMs).toFixed(1)} ms CPU over a round watching nothing (load ${load()})`,
    );
  }
  core.feed.close();
  const check = percentile(perCheck, 50);
  const perHour = check * (HOUR_MS / DEFAULT_WATCH_INTERVAL_MS.versions);
  return [
    figure(
      'feed_fs_check_cpu_ms',
      `fs: CPU of one idle watched space's check (${SPACES} spaces of ${NOTES} notes, median of ${ROUNDS}; load ${load()})`,
      check,
      'ms',
    ),
    figure('feed_fs_calls_per_check', '  store calls per idle check (folder-version stats)', callsPerCheck, 'ratio'),
    figure('feed_fs_cpu_ms_per_hour', `  CPU per idle watched space per hour at ${DEFAULT_WATCH_INTERVAL_MS.versions} ms`, perHour, 'ms'),
    figure(
      'feed_fs_feed_check_cpu_ms',
      `  the same through the feed's timer at ${INTERVAL_MS} ms, over idle rounds (median of ${ROUNDS})`,
      percentile(overhead, 50),
      'ms',
    ),
  ];
}

/** The median of `values`. */
const median = (values: number[]) => percentile(values, 50);

async function benchS3(): Promise<Figure[]> {
  const config = s3TestConfig();
  if (!config) {
    progress('  S3 skipped: LIVE_MEM_TEST_S3_ENDPOINT is not set (bash scripts/ceph-up.sh prints it)');
    return [];
  }
  await ensureS3Bucket(config);
  const prefix = uniqueS3Prefix('bench-feed');
  const storage = createS3Driver({ ...s3DriverOptions(config), prefix });
  try {
    const [id] = await seed(storage, 1);
    const space = id as string;
    // Idle checks through the feed's timer: each one a HEAD of the marker (no full listing within the run).
    const { driver, calls, byMethod } = counted(storage);
    const core = createCore({ storage: driver, watchIntervalMs: 50 });
    const subscription = core.feed.subscribe([space], () => undefined);
    await subscription.ready;
    for (const key of Object.keys(byMethod)) byMethod[key] = 0;
    const start = process.cpuUsage();
    while ((byMethod.stat ?? 0) < CHECKS) await sleep(10);
    const cpuMs = cpuMsOf(process.cpuUsage(start));
    const checks = byMethod.stat ?? 0;
    const idle = calls() / checks;
    subscription.unsubscribe();
    core.feed.close();
    progress(`  S3 idle: ${checks} checks, ${calls()} requests (${JSON.stringify(byMethod)}), load ${load()}`);
    // A full check (a moved marker, or the minute's listing for writers that keep none): counted alone.
    const full = counted(storage);
    const probe = createSpaceProbe(full.driver, space, () => new Date());
    await probe.check(true);
    const fullCalls: number[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const before = full.calls();
      await probe.check(true);
      fullCalls.push(full.calls() - before);
    }
    const fullCost = median(fullCalls);
    const perHour = (HOUR_MS / DEFAULT_WATCH_INTERVAL_MS.listings) * idle + (HOUR_MS / FULL_CHECK_MS) * (fullCost - idle);
    // What the markers cost a writer: a note's write (the marker written after it, not awaited) beside a bare PUT of a note-sized object.
    const writer = counted(storage);
    const notes = createCore({ storage: writer.driver });
    const noteMs: number[] = [];
    const putMs: number[] = [];
    for (let i = 0; i < WRITES; i++) {
      let t = performance.now();
      await notes.notes.write(owner, { space_id: space, category: 'progress', content: `marker bench note ${i}` });
      noteMs.push(performance.now() - t);
      await sleep(20); // spaced: each note its own marker write
      t = performance.now();
      await storage.put(`${space}/bench-bare/${i}.md`, `marker bench bare put ${i}`);
      putMs.push(performance.now() - t);
    }
    await notes.context.storage.close?.();
    const puts = (writer.byMethod.put ?? 0) / WRITES;
    progress(`  S3 writes: ${WRITES} notes, ${JSON.stringify(writer.byMethod)}, load ${load()}`);
    return [
      figure('feed_s3_requests_per_check', `S3: requests per idle watched space's check (a HEAD of its marker; load ${load()})`, idle, 'ratio'),
      figure('feed_s3_full_check_requests', `  requests of a full check (the marker moved, or once a minute; ${NOTES} notes)`, fullCost, 'ratio'),
      figure(
        'feed_s3_requests_per_hour',
        `  requests per idle watched space per hour at ${DEFAULT_WATCH_INTERVAL_MS.listings} ms, the minute's listing included`,
        perHour,
        'ratio',
      ),
      figure('feed_s3_check_cpu_ms', '  CPU of one idle check (the idle process included: an upper bound)', cpuMs / checks, 'ms'),
      figure('feed_s3_note_p50_ms', `  a note's write p50, its marker after it (${WRITES} spaced)`, median(noteMs), 'ms'),
      figure('feed_s3_bare_put_p50_ms', '  a bare PUT of a note-sized object p50, beside it', median(putMs), 'ms'),
      figure('feed_s3_puts_per_note', "  PUTs per spaced note (the note's, its marker's)", puts, 'ratio'),
    ];
  } finally {
    await storage.deleteMany(await listKeys(storage, ''));
    await storage.close?.();
  }
}

export async function benchFeed(): Promise<Figure[]> {
  return [...(await benchFs()), ...(await benchS3())];
}
