/**
 * A store for end-to-end tests, on fs or on S3 (radosgw): the driver to seed and inspect it from the
 * test, and the environment that points a spawned live-mem process at the same store.
 */
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
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
