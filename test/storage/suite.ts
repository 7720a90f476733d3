/**
 * The storage conformance suite: one set of behaviours every driver must show, run unchanged by
 * memory.test.ts, fs.test.ts and s3.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isLiveMemError } from '../../src/shared/errors.js';
import { openBatch } from '../../src/storage/batch.js';
import { acquireLease } from '../../src/storage/lease.js';
import { listKeys } from '../../src/storage/list.js';
import { isObjectTooLarge } from '../../src/storage/object-size.js';
import type { StorageDriver } from '../../src/storage/types.js';

export interface DriverHarness {
  driver: StorageDriver;
  cleanup(): Promise<void>;
}

const rejectsWith = (code: string) => (error: unknown) => isLiveMemError(error) && error.code === code;

export function runStorageSuite(name: string, makeHarness: () => Promise<DriverHarness>): void {
  describe(`storage conformance: ${name}`, () => {
    let harness: DriverHarness;
    let driver: StorageDriver;
    before(async () => {
      harness = await makeHarness();
      driver = harness.driver;
    });
    after(async () => harness?.cleanup());

    it('answers null for a missing key', async () => {
      assert.equal(await driver.get('missing/key.md'), null);
      assert.equal(await driver.stat('missing/key.md'), null);
    });

    it('stores and returns bodies byte for byte, with size, date and etag', async () => {
      const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
      await driver.put('rt/bin.dat', bytes);
      const got = await driver.get('rt/bin.dat');
      assert.ok(got);
      assert.deepEqual(got.body, bytes);
      assert.equal(got.size, bytes.length);
      assert.ok(got.lastModified instanceof Date && !Number.isNaN(got.lastModified.getTime()));
      assert.ok(got.etag.length > 0);
      const text = 'héllo — 日本語 ✓\n';
      await driver.put('rt/ünicode name.md', text);
      assert.equal((await driver.get('rt/ünicode name.md'))?.body.toString('utf8'), text);
      const stat = await driver.stat('rt/bin.dat');
      assert.equal(stat?.size, bytes.length);
      assert.equal(stat?.etag, got.etag);
    });

    it('reads no object larger than the maxBytes asked for: too_large, nothing read; one that fits is read', async () => {
      await driver.put('mx/a.md', '0123456789');
      await assert.rejects(
        driver.get('mx/a.md', { maxBytes: 9 }),
        (error) => isObjectTooLarge(error) && /mx\/a\.md is 10 bytes/.test((error as Error).message),
      );
      assert.equal((await driver.get('mx/a.md', { maxBytes: 10 }))?.body.toString(), '0123456789');
      assert.equal(await driver.get('mx/missing.md', { maxBytes: 1 }), null);
    });

    it('replaces a body and changes its etag', async () => {
      const first = await driver.put('rp/a.md', 'one');
      const second = await driver.put('rp/a.md', 'two');
      assert.notEqual(first.etag, second.etag);
      assert.equal((await driver.get('rp/a.md'))?.body.toString(), 'two');
    });

    it('creates only when asked, and refuses to overwrite', async () => {
      await driver.put('co/a.md', 'first', { ifNoneMatch: '*' });
      await assert.rejects(driver.put('co/a.md', 'second', { ifNoneMatch: '*' }), rejectsWith('precondition_failed'));
      assert.equal((await driver.get('co/a.md'))?.body.toString(), 'first');
    });

    it('compares and swaps against the etag it was given', async () => {
      const { etag } = await driver.put('cas/a.md', 'v1');
      const next = await driver.put('cas/a.md', 'v2', { ifMatch: etag });
      await assert.rejects(driver.put('cas/a.md', 'v3', { ifMatch: etag }), rejectsWith('precondition_failed'));
      assert.equal((await driver.get('cas/a.md'))?.body.toString(), 'v2');
      await driver.put('cas/a.md', 'v4', { ifMatch: next.etag });
      assert.equal((await driver.get('cas/a.md'))?.body.toString(), 'v4');
      await assert.rejects(driver.put('cas/missing.md', 'x', { ifMatch: etag }), rejectsWith('precondition_failed'));
      assert.equal(await driver.get('cas/missing.md'), null);
    });

    it('lets exactly one of many racing creators win', async () => {
      const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => driver.put('race/create.md', `writer ${i}`, { ifNoneMatch: '*' })));
      const winners = results.filter((r) => r.status === 'fulfilled');
      assert.equal(winners.length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(rejectsWith('precondition_failed')(r.reason));
      assert.match((await driver.get('race/create.md'))?.body.toString() ?? '', /^writer \d+$/);
    });

    it('lets exactly one of many racing compare-and-swap writers win', async () => {
      const { etag } = await driver.put('race/cas.md', 'base');
      const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => driver.put('race/cas.md', `writer ${i}`, { ifMatch: etag })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(rejectsWith('precondition_failed')(r.reason));
    });

    it('lists by prefix in ascending order, page by page', async () => {
      const keys = ['ls/b/2.md', 'ls/a.md', 'ls/b/1.md', 'ls/c.md', 'ls/b/3/deep.md', 'lsx/other.md'];
      for (const key of keys) await driver.put(key, key);
      assert.deepEqual(await listKeys(driver, 'ls/'), ['ls/a.md', 'ls/b/1.md', 'ls/b/2.md', 'ls/b/3/deep.md', 'ls/c.md']);
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await driver.list('ls/', { limit: 2, ...(cursor ? { cursor } : {}) });
        pages.push(page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
      assert.deepEqual(pages.flat(), ['ls/a.md', 'ls/b/1.md', 'ls/b/2.md', 'ls/b/3/deep.md', 'ls/c.md']);
      assert.ok(pages.length >= 3);
      const shallow = await driver.list('ls/', { delimiter: '/' });
      assert.deepEqual(
        shallow.objects.map((o) => o.key),
        ['ls/a.md', 'ls/c.md'],
      );
      assert.deepEqual(shallow.prefixes, ['ls/b/']);
      assert.deepEqual(await listKeys(driver, 'ls/b/'), ['ls/b/1.md', 'ls/b/2.md', 'ls/b/3/deep.md']);
      assert.deepEqual(await listKeys(driver, 'ls/b/1'), ['ls/b/1.md']);
      assert.deepEqual(await listKeys(driver, 'nothing-here/'), []);
    });

    it('lists in UTF-8 byte order, not UTF-16: a character beyond U+FFFF after one from U+E000 up, in pages and after a key too', async () => {
      // Bytes: a 61 < é C3 A9 < ！ EF BC 81 < 😀 F0 9F 98 80; UTF-16 puts 😀 (D83D DE00) before ！ (FF01).
      const order = ['bo/a.md', 'bo/é.md', 'bo/！.md', 'bo/😀.md', 'bo/😀/x.md'];
      for (const key of [...order].reverse()) await driver.put(key, 'x');
      assert.deepEqual(await listKeys(driver, 'bo/'), order);
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await driver.list('bo/', { limit: 1, ...(cursor ? { cursor } : {}) });
        paged.push(...page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
      assert.deepEqual(paged, order);
      assert.deepEqual(await listKeys(driver, 'bo/', { startAfter: 'bo/！.md' }), ['bo/😀.md', 'bo/😀/x.md']);
      const shallow = await driver.list('bo/', { delimiter: '/' });
      assert.deepEqual(
        shallow.objects.map((o) => o.key),
        order.slice(0, 4),
      );
      assert.deepEqual(shallow.prefixes, ['bo/😀/']);
    });

    it('lists from after a given key (startAfter), page by page', async () => {
      for (const key of ['sa/20260101_a.md', 'sa/20260102_b.md', 'sa/20260103_c.md', 'sa/20260104_d.md']) await driver.put(key, 'x');
      const after = (startAfter: string) => listKeys(driver, 'sa/', { startAfter });
      assert.deepEqual(await after('sa/20260102'), ['sa/20260102_b.md', 'sa/20260103_c.md', 'sa/20260104_d.md']);
      assert.deepEqual(await after('sa/20260102_b.md'), ['sa/20260103_c.md', 'sa/20260104_d.md']);
      assert.deepEqual(await after('sa/2027'), []);
      assert.deepEqual(await after('a'), ['sa/20260101_a.md', 'sa/20260102_b.md', 'sa/20260103_c.md', 'sa/20260104_d.md']);
      const first = await driver.list('sa/', { startAfter: 'sa/20260101_a.md', limit: 2 });
      assert.deepEqual(
        first.objects.map((o) => o.key),
        ['sa/20260102_b.md', 'sa/20260103_c.md'],
      );
      assert.ok(first.cursor);
      const rest = await driver.list('sa/', { startAfter: 'sa/20260101_a.md', cursor: first.cursor });
      assert.deepEqual(
        rest.objects.map((o) => o.key),
        ['sa/20260104_d.md'],
      );
    });

    it('pages through a delimiter listing without repeating a folder', async () => {
      for (const key of ['dl/a/1.md', 'dl/a/2.md', 'dl/b/1.md', 'dl/c.md', 'dl/d/1.md']) await driver.put(key, 'x');
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await driver.list('dl/', { delimiter: '/', limit: 1, ...(cursor ? { cursor } : {}) });
        seen.push(...page.prefixes, ...page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
      assert.deepEqual(seen, ['dl/a/', 'dl/b/', 'dl/c.md', 'dl/d/']);
    });

    it('deletes idempotently, one or many', async () => {
      for (const key of ['del/1.md', 'del/2.md', 'del/3.md']) await driver.put(key, 'x');
      await driver.delete('del/1.md');
      await driver.delete('del/1.md');
      await driver.delete('del/never.md');
      assert.equal(await driver.get('del/1.md'), null);
      await driver.deleteMany(['del/2.md', 'del/3.md', 'del/never.md']);
      assert.deepEqual(await listKeys(driver, 'del/'), []);
    });

    it('gives a folder version that never repeats across a change (where the driver has versions)', async () => {
      if (!driver.version) return;
      const seen: Array<string | null> = [await driver.version('ver/')];
      const changed = (token: string | null) => token === null || !seen.includes(token);
      for (const change of [
        () => driver.put('ver/a.md', '1'),
        () => driver.put('ver/a.md', '2'),
        () => driver.put('ver/b.md', '3'),
        () => driver.delete('ver/a.md'),
      ]) {
        await change();
        const token = await driver.version('ver/');
        assert.ok(changed(token), `version ${token} repeated after a change`);
        seen.push(token);
      }
    });

    it('removes a folder in one step, after which creating into it fails (where the driver has folders)', async () => {
      if (!driver.removeFolder) {
        // No folders: the option is ignored, a create lands anywhere.
        await driver.put('nofolder/a/n1.md', 'one', { ifNoneMatch: '*', inExistingFolder: true });
        assert.equal((await driver.get('nofolder/a/n1.md'))?.body.toString(), 'one');
        return;
      }
      await assert.rejects(driver.put('rmf/live/n0.md', 'x', { ifNoneMatch: '*', inExistingFolder: true }), rejectsWith('not_found'));
      assert.deepEqual(await listKeys(driver, 'rmf/'), [], 'a refused create writes nothing');
      await driver.put('rmf/_meta.json', '{}', { ifNoneMatch: '*' });
      await driver.put('rmf/live/n1.md', 'one', { ifNoneMatch: '*' });
      await driver.put('rmf/live/n2.md', 'two', { ifNoneMatch: '*', inExistingFolder: true });
      await driver.put('rmf/bank/deep/f.md', 'f');
      await driver.put('rmfx/keep.md', 'a sibling whose name starts the same');
      assert.equal(await driver.removeFolder('rmf/'), 4);
      assert.deepEqual(await listKeys(driver, 'rmf/'), []);
      assert.equal(await driver.get('rmf/live/n1.md'), null);
      assert.equal((await driver.get('rmfx/keep.md'))?.body.toString(), 'a sibling whose name starts the same');
      assert.ok(!(await driver.list('', { delimiter: '/' })).prefixes.includes('rmf/'), 'the folder is gone from listings');
      await assert.rejects(driver.put('rmf/live/n3.md', 'three', { ifNoneMatch: '*', inExistingFolder: true }), rejectsWith('not_found'));
      assert.deepEqual(await listKeys(driver, 'rmf/'), []);
      assert.equal(await driver.removeFolder('rmf/'), 0, 'removing a missing folder is no error');
      // Racing creators into a folder being removed: each either landed before (and went with it) or failed.
      await driver.put('rmr/live/seed.md', 'seed', { ifNoneMatch: '*' });
      const writes = Array.from({ length: 40 }, (_, i) => driver.put(`rmr/live/w${i}.md`, `w${i}`, { ifNoneMatch: '*', inExistingFolder: true }));
      const removed = driver.removeFolder('rmr/');
      const outcomes = await Promise.allSettled(writes);
      await removed;
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') assert.ok(rejectsWith('not_found')(outcome.reason), String(outcome.reason));
      }
      assert.deepEqual(await listKeys(driver, 'rmr/'), [], 'nothing written into the removed folder survives it');
    });

    it('writes a batch: creates and replaces, in new folders, readable once flushed', async () => {
      await driver.put('batch/old.md', 'left over');
      const batch = openBatch(driver);
      const keys = Array.from({ length: 40 }, (_, index) => `batch/${index % 3 === 0 ? 'deep/er/' : ''}n${index}.md`);
      await Promise.all(keys.map((key, index) => batch.put(key, `body ${index}`)));
      await batch.put('batch/old.md', Buffer.from([0, 255, 10]));
      await batch.flush();
      await batch.flush(); // idempotent
      for (const [index, key] of keys.entries()) assert.equal((await driver.get(key))?.body.toString(), `body ${index}`);
      assert.deepEqual((await driver.get('batch/old.md'))?.body, Buffer.from([0, 255, 10]));
      assert.deepEqual(await listKeys(driver, 'batch/'), [...keys, 'batch/old.md'].sort());
      await openBatch(driver).flush(); // an empty batch
    });

    it('refuses keys that would escape the store, before any I/O', async () => {
      for (const key of ['../escape.md', 'a/../../escape.md', '/etc/passwd', 'a\\b.md', 'a\u0000b.md', 'a//b.md', './a.md', '', 'x.lmtmp']) {
        await assert.rejects(driver.put(key, 'x'), rejectsWith('invalid_input'), `put ${JSON.stringify(key)}`);
        await assert.rejects(openBatch(driver).put(key, 'x'), rejectsWith('invalid_input'), `batch put ${JSON.stringify(key)}`);
        await assert.rejects(driver.get(key), rejectsWith('invalid_input'), `get ${JSON.stringify(key)}`);
      }
      await assert.rejects(driver.list('../'), rejectsWith('invalid_input'));
      assert.equal(await driver.get('escape.md'), null);
    });

    it('holds a lease for one holder at a time, and lets an expired one be taken over', async () => {
      const lease = await acquireLease(driver, 'lease/lock.json', { owner: 'a', ttlMs: 60_000 });
      await assert.rejects(acquireLease(driver, 'lease/lock.json', { owner: 'b', ttlMs: 60_000 }), rejectsWith('conflict'));
      await lease.renew();
      await lease.release();
      const second = await acquireLease(driver, 'lease/lock.json', { owner: 'b', ttlMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const third = await acquireLease(driver, 'lease/lock.json', { owner: 'c', ttlMs: 60_000 });
      await assert.rejects(second.renew(), rejectsWith('conflict'));
      await second.release(); // not ours any more: must not remove c's lease
      await assert.rejects(acquireLease(driver, 'lease/lock.json', { owner: 'd', ttlMs: 60_000 }), rejectsWith('conflict'));
      await third.release();
      assert.equal(await driver.get('lease/lock.json'), null);
    });

    it("takes a holder's renewals one after another: renewals at once never find the lease lost to themselves", async () => {
      const lease = await acquireLease(driver, 'lease/renew.json', { owner: 'a', ttlMs: 60_000 });
      // A holder's timer and its check before a commit, at once (likely when each write takes seconds).
      await Promise.all([lease.renew(), lease.renew(), lease.renew()]);
      await assert.rejects(acquireLease(driver, 'lease/renew.json', { owner: 'b', ttlMs: 60_000 }), rejectsWith('conflict'));
      await lease.renew();
      await lease.release();
      assert.equal(await driver.get('lease/renew.json'), null);
    });

    it('lets exactly one of many racing lease takers win', async () => {
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => acquireLease(driver, 'lease/race.json', { owner: `o${i}`, ttlMs: 60_000 })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    });
  });
}
