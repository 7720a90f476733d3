/**
 * Section 20's rounds on S3, run when LIVE_MEM_TEST_S3_ENDPOINT names a store (the dev radosgw): the
 * 100k space seeded as on fs under a fresh prefix of the test bucket, its snapshot written by a first
 * build, the same 99 tail notes, then the first memory_search of a new process as an agent meets it —
 * the build's executable (the bundle, so module loading is what a user pays) spawned over stdio with
 * the S3 settings, timed from the handshake to the answer, with the server's CPU time over that span
 * from /proc and the load as the round ran. The 1M space is not seeded here: with its snapshots it
 * takes about 700 MB of the store, and the dev radosgw (scripts/ceph-up.sh) keeps 1 GB in memory —
 * filled, it blocks every write and delete of every test run; its first build also takes minutes. The
 * space is deleted after the rounds. The seeding and the snapshot are this checkout's; a baseline build
 * whose snapshots differ rebuilds in its first round.
 */
import { loadavg } from 'node:os';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import type { S3Harness } from '../test/helpers/s3.js';
import { cpuMs, figure, type Figure, percentile, startServer, systemUnderTest } from './bench-lib.js';
import { seedSynthetic, type SeedPlan } from './bench-recall.js';

export interface S3Round {
  /** Spawn to the handshake answered. */
  startMs: number;
  /** Handshake to the first memory_search answered. */
  firstMs: number;
  /** The server's CPU time over that span (null without /proc). */
  cpuMs: number | null;
  load: number;
}

export interface S3Space {
  harness: S3Harness;
  spaceId: string;
  seedMs: number;
}

/** Seeds the space on S3, builds its snapshot and writes the tail notes; null when no S3 store is configured. */
export async function seedS3Space(plan: SeedPlan, texts: readonly string[], tail: readonly string[], query: string): Promise<S3Space | null> {
  if (!process.env.LIVE_MEM_TEST_S3_ENDPOINT) return null;
  const { makeS3Harness } = await import('../test/helpers/s3.js');
  const harness = await makeS3Harness({ prefix: `bench-scale-${Date.now().toString(36)}` });
  try {
    const started = performance.now();
    await seedSynthetic(harness.driver, plan, texts);
    const seedMs = performance.now() - started;
    const core = createCore({ storage: harness.driver });
    const caller = ownerCaller('bench');
    await core.recall.search(caller, { space_id: plan.spaceId, query, limit: 10 }); // the first build
    await core.idle(); // its snapshot written
    for (const content of tail) await core.notes.write(caller, { space_id: plan.spaceId, category: 'observation', content });
    await core.idle();
    return { harness, spaceId: plan.spaceId, seedMs };
  } catch (error) {
    await harness.cleanup().catch(() => undefined);
    throw error;
  }
}

export async function s3FirstSearch(space: S3Space, home: string, query: string): Promise<S3Round> {
  const { options } = space.harness;
  const load = loadavg()[0] ?? 0;
  const started = performance.now();
  const server = await startServer(home, {
    args: [systemUnderTest().bin],
    env: () => ({
      LIVE_MEM_HOME: home,
      LIVE_MEM_AGENT: 'bench',
      LIVE_MEM_LOG_LEVEL: 'warn',
      LIVE_MEM_STORAGE: 's3',
      LIVE_MEM_S3_ENDPOINT: options.endpoint ?? '',
      LIVE_MEM_S3_BUCKET: options.bucket,
      LIVE_MEM_S3_ACCESS_KEY_ID: options.accessKeyId ?? '',
      LIVE_MEM_S3_SECRET_ACCESS_KEY: options.secretAccessKey ?? '',
      LIVE_MEM_S3_PREFIX: options.prefix ?? '',
    }),
  });
  const connected = performance.now();
  const cpuBefore = cpuMs(server.pid);
  try {
    await server.call('memory_search', { space_id: space.spaceId, query, limit: 10 });
    const answered = performance.now();
    const cpuAfter = cpuMs(server.pid);
    const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    return { startMs: connected - started, firstMs: answered - connected, cpuMs: cpu, load };
  } finally {
    await server.close();
  }
}

export async function dropS3Space(space: S3Space): Promise<void> {
  await space.harness.cleanup();
}

/** The S3 figures, beside section 20's fs ones (no target: the issue's are the fs store's). */
export function s3Figures(space: S3Space, rounds: readonly S3Round[], label: string): Figure[] {
  const first = rounds.map((r) => r.firstMs);
  const spread = `${Math.min(...first).toFixed(0)}–${Math.max(...first).toFixed(0)}`;
  const loads = rounds.map((r) => r.load.toFixed(1)).join(', ');
  return [
    figure(`scale_s3_seed_${label}_ms`, `the ${label} space seeded on S3 (LIVE_MEM_TEST_S3_ENDPOINT)`, space.seedMs, 'ms'),
    figure(
      `scale_first_s3_${label}_ms`,
      `memory_search on S3, first of a new process over stdio, handshake to answer (median of ${rounds.length}: ${spread} ms; loads ${loads})`,
      percentile(first, 50),
      'ms',
    ),
    figure(
      `scale_first_s3_${label}_cpu_ms`,
      "  the server's CPU time over it (median, /proc)",
      rounds.some((r) => r.cpuMs === null)
        ? null
        : percentile(
            rounds.map((r) => r.cpuMs as number),
            50,
          ),
      'ms',
    ),
    figure(
      `scale_first_s3_${label}_start_ms`,
      "  the process's start and handshake before it, S3 driver made (median)",
      percentile(
        rounds.map((r) => r.startMs),
        50,
      ),
      'ms',
    ),
  ];
}
