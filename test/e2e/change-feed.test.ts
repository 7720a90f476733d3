/**
 * Change notifications across processes (issue 44, item 2): two built binaries over stdio with the
 * SDK's v1 client, on one fs store and on one radosgw bucket. A client of A subscribed to a space's
 * resources is told of a note written through B, of an agent-written consolidation committed through
 * B (the files it wrote, the synthesis, the list), and of a space B created — fs within 2 s, S3 within
 * the polling interval plus 2 s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';
import { ensureS3Bucket, requireS3OrSkip, s3DriverOptions, s3ProcessEnv, uniqueS3Prefix } from '../helpers/s3.js';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep, within } from '../helpers/wait.js';

const URIS = ['live-mem://demo/live', 'live-mem://demo/synthesis', 'live-mem://demo/bank/activeContext.md'];

function scenario(label: string, makeEnv: () => Promise<{ env: Record<string, string>; deadlineMs: number; cleanup(): Promise<void> }>) {
  // A hang (a server that never closes) fails the suite in 3 minutes rather than holding CI.
  describe(`notifications across two processes, ${label}`, { timeout: 180_000 }, () => {
    let a: SpawnedServer;
    let b: SpawnedServer;
    let deadline = 0;
    let cleanup: () => Promise<void> = async () => undefined;
    const updated: string[] = [];
    let listChanged = 0;

    before(async () => {
      const made = await makeEnv();
      deadline = made.deadlineMs;
      cleanup = made.cleanup;
      b = await spawnServer({ ...made.env, LIVE_MEM_AGENT: 'bob', LIVE_MEM_TOOLS: 'admin' });
      assert.equal((await b.call('space_create', { space_id: 'demo' })).status, 'created');
      assert.equal((await b.call('live_note', { space_id: 'demo', category: 'observation', content: 'The API listens on port 8443.' })).status, 'created');
      a = await spawnServer({ ...made.env, LIVE_MEM_AGENT: 'alice' });
      a.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        updated.push(notification.params.uri);
      });
      a.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        listChanged++;
      });
      await a.client.listResources();
      for (const uri of URIS) await a.client.subscribeResource({ uri });
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await cleanup();
    });

    it('a note written through B reaches the subscriber of live-mem://demo/live on A', async (t) => {
      updated.length = 0;
      await sleep(300); // nothing is told without a change
      assert.equal(updated.length, 0, updated.join(' '));
      assert.equal((await b.call('live_note', { space_id: 'demo', category: 'decision', content: 'Release 3.2.1 ships on 2026-03-14.' })).status, 'created');
      const took = await within(deadline, () => updated.includes('live-mem://demo/live'), 'resources/updated for the live notes');
      t.diagnostic(`the note told after ${took} ms`);
      const { contents } = await a.client.readResource({ uri: 'live-mem://demo/live' });
      assert.match(String((contents[0] as { text: string }).text), /\n- \[\S+ "bob" decision\] Release 3\.2\.1 ships on 2026-03-14\./);
    });

    it('a consolidation committed through B: the files it wrote, the synthesis, the live notes it moved, the list', async (t) => {
      updated.length = 0;
      const listedBefore = listChanged;
      const pkg = (await b.call('bank_consolidate', { space_id: 'demo' })) as unknown as { handle: string; prompt: string };
      const done = await b.call('bank_consolidate', { space_id: 'demo', handle: pkg.handle, plan: writePlan(pkg) });
      assert.equal(done.status, 'ok', JSON.stringify(done));
      const took = await within(deadline, () => URIS.every((uri) => updated.includes(uri)) && listChanged > listedBefore, 'every notification of the commit');
      t.diagnostic(`the commit told after ${took} ms`);
      await sleep(300);
      assert.equal(listChanged, listedBefore + 1, 'one list_changed: activeContext.md created');
      assert.equal(updated.filter((uri) => uri === 'live-mem://demo/bank/activeContext.md').length, 1, 'the file told once');
      const { contents } = await a.client.readResource({ uri: 'live-mem://demo/bank/activeContext.md' });
      assert.match(String((contents[0] as { text: string }).text), /port 8443/);
    });

    it('a correction through B (bank_write) notifies the file; a space created through B changes the list', async () => {
      updated.length = 0;
      const read = await b.call('bank_read', { space_id: 'demo', filename: 'activeContext.md' });
      const written = await b.call('bank_write', {
        space_id: 'demo',
        filename: 'activeContext.md',
        content: '# Active Context\n\n- corrected by bob\n',
        if_match: read.version,
        reason: 'test',
      });
      assert.equal(written.status, 'ok', JSON.stringify(written));
      await within(deadline, () => updated.includes('live-mem://demo/bank/activeContext.md'), 'resources/updated after the correction');
      const listedBefore = listChanged;
      assert.equal((await b.call('space_create', { space_id: 'other' })).status, 'created');
      await within(deadline, () => listChanged > listedBefore, 'list_changed after a space created elsewhere');
      assert.ok((await a.client.listResources()).resources.some((resource) => resource.uri === 'live-mem://other/rules'));
    });

    it('unsubscribed, A is told nothing more of that URI', async () => {
      await a.client.unsubscribeResource({ uri: 'live-mem://demo/live' });
      updated.length = 0;
      await b.call('live_note', { space_id: 'demo', category: 'todo', content: 'write the changelog' });
      await sleep(deadline);
      assert.deepEqual(updated, []);
    });
  });
}

scenario('on one fs store (within 2 s)', async () => {
  const home = await tempDir();
  return { env: { LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' }, deadlineMs: 2_000, cleanup: () => home.remove() };
});

const s3 = requireS3OrSkip('change feed on S3');
if (s3) {
  const INTERVAL_MS = 500;
  scenario(`on one radosgw bucket (LIVE_MEM_WATCH_INTERVAL_MS=${INTERVAL_MS}, within the interval + 2 s)`, async () => {
    await ensureS3Bucket(s3);
    const prefix = uniqueS3Prefix('feed');
    const home = await tempDir();
    return {
      env: { ...s3ProcessEnv(s3, prefix), LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn', LIVE_MEM_WATCH_INTERVAL_MS: String(INTERVAL_MS) },
      deadlineMs: INTERVAL_MS + 2_000,
      cleanup: async () => {
        const driver = createS3Driver({ ...s3DriverOptions(s3), prefix });
        await driver.deleteMany(await listKeys(driver, ''));
        await driver.close?.();
        await home.remove();
      },
    };
  });
}
