/**
 * Test access to a real S3 store (radosgw from scripts/ceph-up.sh), shared by every test that needs S3.
 *
 *   LIVE_MEM_TEST_S3_ENDPOINT, LIVE_MEM_TEST_S3_ACCESS_KEY_ID, LIVE_MEM_TEST_S3_SECRET_ACCESS_KEY
 *   LIVE_MEM_TEST_S3_BUCKET   optional, default 'live-mem-test' (created if missing)
 *   LIVE_MEM_TEST_S3=required  a missing endpoint fails the run instead of skipping
 *
 * Each harness works under a fresh unique prefix, so runs and parallel files never collide, and its
 * cleanup deletes everything under that prefix.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { createS3Driver, type S3DriverOptions, type S3StorageDriver } from '../../src/storage/s3/s3-driver.js';
import { listKeys } from '../../src/storage/list.js';

export interface S3TestConfig {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

export interface S3Harness {
  driver: S3StorageDriver;
  /** The unique key prefix of this harness (ends with '/'). */
  prefix: string;
  /** The options the driver was made with: make more drivers on the same prefix with them. */
  options: S3DriverOptions;
  /** Deletes every object under `prefix` and closes the driver. */
  cleanup(): Promise<void>;
}

export const S3_NOT_CONFIGURED =
  'radosgw is not configured: set LIVE_MEM_TEST_S3_ENDPOINT, LIVE_MEM_TEST_S3_ACCESS_KEY_ID and LIVE_MEM_TEST_S3_SECRET_ACCESS_KEY ' +
  '(start one with `bash scripts/ceph-up.sh`, which prints them)';

/** The S3 test store from the environment, or null when none is configured. */
export function s3TestConfig(): S3TestConfig | null {
  const endpoint = process.env.LIVE_MEM_TEST_S3_ENDPOINT;
  if (!endpoint) return null;
  return {
    endpoint,
    accessKeyId: process.env.LIVE_MEM_TEST_S3_ACCESS_KEY_ID ?? 'livememtest',
    secretAccessKey: process.env.LIVE_MEM_TEST_S3_SECRET_ACCESS_KEY ?? 'livememtestsecret',
    bucket: process.env.LIVE_MEM_TEST_S3_BUCKET || 'live-mem-test',
  };
}

/**
 * The config, or null after registering a stand-in test: failing when LIVE_MEM_TEST_S3=required
 * (CI must not pass by skipping), skipped otherwise (local dev without Ceph). Call at file top level.
 */
export function requireS3OrSkip(label = 's3'): S3TestConfig | null {
  const config = s3TestConfig();
  if (config) return config;
  if (process.env.LIVE_MEM_TEST_S3 === 'required') {
    it(`${label}: needs radosgw (LIVE_MEM_TEST_S3=required)`, () => assert.fail(S3_NOT_CONFIGURED));
  } else {
    it(`${label}: needs radosgw`, { skip: S3_NOT_CONFIGURED }, () => undefined);
  }
  return null;
}

/** Driver options for the test store (no prefix). */
export function s3DriverOptions(config: S3TestConfig): S3DriverOptions {
  return {
    bucket: config.bucket,
    endpoint: config.endpoint,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    forcePathStyle: true,
  };
}

/** A prefix no other run or harness uses. */
export function uniqueS3Prefix(label = 't'): string {
  return `${label}-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}/`;
}

const ensured = new Map<string, Promise<void>>();

/** Creates the test bucket if missing (once per process and bucket). */
export function ensureS3Bucket(config: S3TestConfig): Promise<void> {
  const id = `${config.endpoint}|${config.bucket}`;
  let done = ensured.get(id);
  if (!done) {
    done = createBucketIfMissing(config).catch((error: unknown) => {
      ensured.delete(id);
      throw error;
    });
    ensured.set(id, done);
  }
  return done;
}

async function createBucketIfMissing(config: S3TestConfig): Promise<void> {
  const client = new S3Client({
    endpoint: config.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    await client.send(new HeadBucketCommand({ Bucket: config.bucket }));
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw error;
    try {
      await client.send(new CreateBucketCommand({ Bucket: config.bucket }));
    } catch (createError) {
      if ((createError as Error).name !== 'BucketAlreadyOwnedByYou') throw createError;
    }
  } finally {
    client.destroy();
  }
}

/** A driver on the test bucket under a fresh unique prefix (or `overrides.prefix`). Needs a config. */
export async function makeS3Harness(overrides: Partial<S3DriverOptions> = {}): Promise<S3Harness> {
  const config = s3TestConfig();
  if (!config) throw new Error(S3_NOT_CONFIGURED);
  await ensureS3Bucket(config);
  const options: S3DriverOptions = { ...s3DriverOptions(config), prefix: uniqueS3Prefix(), ...overrides };
  const bare = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
  // Cleanup deletes everything under the prefix: never let that be the whole bucket.
  if (bare === '') throw new Error('makeS3Harness needs a non-empty prefix');
  const prefix = `${bare}/`;
  const driver = createS3Driver(options);
  return {
    driver,
    prefix,
    options,
    async cleanup() {
      // A fresh driver: the test may have closed its own.
      const sweeper = createS3Driver(options);
      try {
        await sweeper.deleteMany(await listKeys(sweeper, ''));
      } finally {
        await sweeper.close?.();
        await driver.close?.();
      }
    },
  };
}

/** The environment that points a spawned live-mem process at the test store, under `prefix`. */
export function s3ProcessEnv(config: S3TestConfig, prefix: string): Record<string, string> {
  return {
    LIVE_MEM_STORAGE: 's3',
    LIVE_MEM_S3_ENDPOINT: config.endpoint,
    LIVE_MEM_S3_BUCKET: config.bucket,
    LIVE_MEM_S3_ACCESS_KEY_ID: config.accessKeyId,
    LIVE_MEM_S3_SECRET_ACCESS_KEY: config.secretAccessKey,
    LIVE_MEM_S3_PREFIX: prefix,
  };
}
