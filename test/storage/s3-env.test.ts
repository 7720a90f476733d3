import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The S3 driver leaves the process's environment alone; the binary, the process's entry, silences the
 * AWS SDK's Node-22 notice (bin/live-mem.cjs). No store is reached: the SDK speaks as its client is made.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOTICE = /NodeVersionSupportWarning/;
const onNode20 = Number(process.versions.node.split('.')[0]) < 22;
const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _, ...cleanEnv } = process.env;

describe('the S3 driver and the process environment', () => {
  it('making a driver changes no environment variable', () => {
    const before = { ...process.env };
    createS3Driver({ bucket: 'b', endpoint: 'http://127.0.0.1:9', accessKeyId: 'k', secretAccessKey: 's' });
    assert.deepEqual({ ...process.env }, before);
  });

  it('the binary shows no SDK notice on stderr; the driver made elsewhere on Node 20 leaves it to its host', async () => {
    const home = await tempDir();
    try {
      const bin = spawnSync(process.execPath, [path.join(ROOT, 'bin/live-mem.cjs'), 'health', '--json'], {
        encoding: 'utf8',
        env: {
          ...cleanEnv,
          LIVE_MEM_HOME: home.dir,
          LIVE_MEM_STORAGE: 's3',
          LIVE_MEM_S3_ENDPOINT: 'http://127.0.0.1:9',
          LIVE_MEM_S3_BUCKET: 'b',
          LIVE_MEM_S3_ACCESS_KEY_ID: 'k',
          LIVE_MEM_S3_SECRET_ACCESS_KEY: 's',
          LIVE_MEM_S3_TIMEOUT_MS: '1000',
        },
      });
      assert.match(bin.stdout, /"storage"/, bin.stderr);
      assert.doesNotMatch(bin.stderr, NOTICE);
      // The same driver in a host process that did not opt out: the SDK's notice is its host's to hear (on Node 20).
      const driver = new URL('../../src/storage/s3/s3-driver.js', import.meta.url).href; // compiled beside its source (run-tests.mjs)
      const host = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', `(await import(${JSON.stringify(driver)})).createS3Driver({ bucket: 'b', endpoint: 'http://127.0.0.1:9' });`],
        {
          encoding: 'utf8',
          env: cleanEnv,
        },
      );
      assert.equal(host.status, 0, host.stderr);
      assert.equal(NOTICE.test(host.stderr), onNode20, host.stderr);
    } finally {
      await home.remove();
    }
  });
});
