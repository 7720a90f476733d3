import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { isLiveMemError } from '../../src/shared/errors.js';
import { listKeys } from '../../src/storage/list.js';
import { createS3Driver, probeConditionalWrites } from '../../src/storage/s3/s3-driver.js';
import { makeS3Harness, requireS3OrSkip, s3DriverOptions, uniqueS3Prefix } from '../helpers/s3.js';
import { runStorageSuite } from './suite.js';

const config = requireS3OrSkip('s3 driver (radosgw)');

if (config) {
  runStorageSuite('s3 (radosgw)', () => makeS3Harness());

  describe('s3 driver on radosgw', () => {
    it('applies its prefix to every key and strips it from listings', async () => {
      const base = uniqueS3Prefix('px').slice(0, -1);
      const outer = await makeS3Harness({ prefix: base });
      const a = await makeS3Harness({ prefix: `${base}/team-a` }); // no trailing slash
      const b = await makeS3Harness({ prefix: `${base}/team-b/` });
      try {
        assert.equal(a.driver.location, `s3://${config.bucket}/${base}/team-a`);
        await a.driver.put('notes/x.md', 'from a');
        await b.driver.put('notes/x.md', 'from b');
        await b.driver.put('notes/y.md', 'only b');
        assert.equal((await a.driver.get('notes/x.md'))?.body.toString(), 'from a');
        assert.equal((await b.driver.get('notes/x.md'))?.body.toString(), 'from b');
        assert.equal(await a.driver.get('notes/y.md'), null);
        assert.deepEqual(await listKeys(a.driver, ''), ['notes/x.md']);
        assert.deepEqual(await listKeys(b.driver, 'notes/'), ['notes/x.md', 'notes/y.md']);
        const shallow = await b.driver.list('', { delimiter: '/' });
        assert.deepEqual(shallow.prefixes, ['notes/']);
        // The real keys carry the prefixes.
        assert.deepEqual(await listKeys(outer.driver, ''), ['team-a/notes/x.md', 'team-b/notes/x.md', 'team-b/notes/y.md']);
        await a.driver.deleteMany(['notes/x.md', 'notes/y.md']);
        assert.equal((await b.driver.get('notes/y.md'))?.body.toString(), 'only b');
      } finally {
        await a.cleanup();
        await b.cleanup();
        await outer.cleanup();
      }
    });

    it('finds that radosgw honours conditional writes, probing once and leaving no probe behind', async () => {
      const h = await makeS3Harness();
      try {
        assert.equal(await h.driver.checkConditionalWrites(), 'supported');
        assert.equal(await probeConditionalWrites(h.driver), 'supported');
        assert.strictEqual(h.driver.checkConditionalWrites(), h.driver.checkConditionalWrites());
        assert.deepEqual(await listKeys(h.driver, '_system/'), []);
      } finally {
        await h.cleanup();
      }
    });

    it('reports a wrong secret as a clear storage_error', async () => {
      const driver = createS3Driver({ ...s3DriverOptions(config), secretAccessKey: 'not-the-secret', prefix: uniqueS3Prefix(), maxAttempts: 1 });
      try {
        for (const attempt of [() => driver.get('a.md'), () => driver.put('a.md', 'x'), () => driver.list('')]) {
          await assert.rejects(attempt(), (error: unknown) => {
            assert.ok(isLiveMemError(error, 'storage_error'), `not a LiveMemError: ${String(error)}`);
            assert.match(error.message, new RegExp(`S3 access denied for bucket ${config.bucket}`));
            return true;
          });
        }
      } finally {
        await driver.close();
      }
    });

    it('reports a missing bucket clearly', async () => {
      const driver = createS3Driver({ ...s3DriverOptions(config), bucket: `live-mem-missing-${Date.now().toString(36)}`, maxAttempts: 1 });
      try {
        await assert.rejects(driver.get('a.md'), (error: unknown) => isLiveMemError(error, 'storage_error') && /does not exist/.test(error.message));
        await assert.rejects(driver.put('a.md', 'x'), (error: unknown) => isLiveMemError(error, 'storage_error') && /does not exist/.test(error.message));
      } finally {
        await driver.close();
      }
    });
  });
}

describe('s3 driver without radosgw', () => {
  it('detects a store that ignores conditional writes and refuses to lock on it', async () => {
    const requests: string[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests.push(`${req.method} ${req.url} ${req.headers['if-none-match'] ?? ''}`);
      req.resume();
      req.on('end', () => {
        if (req.method === 'PUT') {
          res.writeHead(200, { ETag: '"0123456789abcdef0123456789abcdef"' }).end();
        } else if (req.method === 'DELETE') {
          res.writeHead(204).end();
        } else {
          const xml = '<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>';
          res.writeHead(404, { 'Content-Type': 'application/xml' }).end(req.method === 'HEAD' ? undefined : xml);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const driver = createS3Driver({ bucket: 'fake', endpoint, accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true, maxAttempts: 1 });
    try {
      await driver.put('plain.md', 'a plain put needs no probe');
      assert.equal(requests.length, 1);
      await assert.rejects(driver.put('lock.json', '{}', { ifNoneMatch: '*' }), (error: unknown) => {
        assert.ok(isLiveMemError(error, 'unsupported'), `expected unsupported, got ${String(error)}`);
        assert.match(error.message, /ignores conditional writes/);
        assert.ok(error.message.includes(endpoint));
        return true;
      });
      await assert.rejects(driver.put('lock.json', '{}', { ifMatch: 'abc' }), (error: unknown) => isLiveMemError(error, 'unsupported'));
      assert.equal(await driver.checkConditionalWrites(), 'unsupported');
      // One probe: a plain put, the create-only put the store wrongly accepted, then its deletion.
      const probes = requests.filter((r) => r.includes('/_system/probes/'));
      assert.equal(probes.length, 3);
      assert.match(probes[1] ?? '', /^PUT .* \*$/);
      assert.match(probes[2] ?? '', /^DELETE /);
      assert.ok(!requests.some((r) => r.includes('lock.json')), 'no conditional put reached the store');
      assert.equal(await driver.get('missing.md'), null);
    } finally {
      await driver.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails clearly on an unreachable endpoint: a refused connection, said as one, not waited out as a stall', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve)); // now a closed port
    const endpoint = `http://127.0.0.1:${port}`;
    const driver = createS3Driver({ bucket: 'b', endpoint, accessKeyId: 'k', secretAccessKey: 's', maxAttempts: 2, connectTimeoutMs: 1000 });
    try {
      for (const attempt of [() => driver.get('a.md'), () => driver.put('a.md', 'x', { ifNoneMatch: '*' })]) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(isLiveMemError(error, 'storage_error'), `not a LiveMemError: ${String(error)}`);
          assert.ok(error.message.includes(`cannot reach S3 endpoint ${endpoint} (ECONNREFUSED)`), error.message);
          return true;
        });
      }
    } finally {
      await driver.close();
    }
  });

  it('refuses an invalid key before any request', async () => {
    const driver = createS3Driver({ bucket: 'b', endpoint: 'http://127.0.0.1:9', accessKeyId: 'k', secretAccessKey: 's', maxAttempts: 1 });
    try {
      await assert.rejects(driver.get('../x'), (error: unknown) => isLiveMemError(error, 'invalid_input'));
      await assert.rejects(driver.deleteMany(['ok.md', 'a//b']), (error: unknown) => isLiveMemError(error, 'invalid_input'));
    } finally {
      await driver.close();
    }
  });
});
