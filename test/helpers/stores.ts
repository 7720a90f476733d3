/**
 * A store for end-to-end tests, on fs or on S3 (radosgw): the driver to seed and inspect it from the
 * test, and the environment that points a spawned live-mem process at the same store.
 */
import { spaceKeys } from '../../src/core/layout.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { inspectLease } from '../../src/storage/lease.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { makeS3Harness, s3ProcessEnv, type S3TestConfig } from './s3.js';
import { tempDir } from './tmp.js';

export interface Store {
  storage: StorageDriver;
  env: Record<string, string>;
  remove(): Promise<void>;
}

export async function fsStore(): Promise<Store> {
  const home = await tempDir();
  return { storage: createFsDriver(home.dir), env: { LIVE_MEM_HOME: home.dir }, remove: home.remove };
}

/** A fresh prefix in the test bucket. */
export async function s3Store(s3: S3TestConfig): Promise<Store> {
  const harness = await makeS3Harness();
  return { storage: harness.driver, env: s3ProcessEnv(s3, harness.prefix), remove: harness.cleanup };
}

/**
 * Runs a command (a CLI run answering `--json`) again while it is refused with `conflict` because the
 * space's lease is held. A killed holder's lease is taken over at once when its process is known to be
 * gone; when that cannot be told (its pid already reused on a busy machine, no /proc), the lease blocks
 * until its expiry: this waits for the expiry the lease itself records, however slow the machine,
 * rather than for a fixed time.
 */
export async function rerunPastLease<R extends { exitCode?: number; stdout: string }>(
  storage: StorageDriver,
  spaceId: string,
  run: () => Promise<R>,
): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const result = await run();
    const status = result.exitCode === 1 ? (JSON.parse(result.stdout) as { status?: string }).status : undefined;
    if (status !== 'conflict' || attempt === 5) return result;
    const { record } = await inspectLease(storage, spaceKeys(spaceId).lock);
    const wait = record ? Date.parse(record.expires_at) - Date.now() + 100 : 0;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
