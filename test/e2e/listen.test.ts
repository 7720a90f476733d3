/**
 * `subscriptions/listen` across processes and hosts (issue 44, item 2, the 2026-07-28 era): the SDK's
 * v2 client, negotiating the modern era, listens on one live-mem while another writes. Two built
 * binaries over stdio on one fs store: a note written through B and a consolidation committed through
 * B reach A's stream within 2 s, a space created through B changes its list. Two team servers
 * (`live-mem serve --http`) over one radosgw bucket: the same through server B reach a stream on
 * server A within the polling interval plus 2 s, and a stream whose token may read another space
 * only is acknowledged nothing of this one and hears nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, type McpSubscription, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { listKeys } from '../../src/storage/list.js';
import { createS3Driver } from '../../src/storage/s3/s3-driver.js';
import { BIN, type HttpServer, spawnServer, startHttpServer, toolCaller } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';
import { ensureS3Bucket, requireS3OrSkip, s3DriverOptions, s3ProcessEnv, uniqueS3Prefix } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep, within } from '../helpers/wait.js';
import { recordResourceNotices } from '../helpers/resource-notices.js';

const URIS = ['live-mem://demo/live', 'live-mem://demo/synthesis', 'live-mem://demo/bank/activeContext.md'];
const FILTER = { resourceSubscriptions: URIS, resourcesListChanged: true };
const modernClient = () => new Client({ name: 'listen-e2e', version: '0' }, { versionNegotiation: { mode: 'auto' } });

type Call = (name: string, args?: Record<string, unknown>) => Promise<Record<string, unknown> & { status: string }>;

/** What every scenario checks: B's note, B's consolidation, B's new space, told to A's stream. */
function checks(setup: () => { call: Call; seen: ReturnType<typeof recordResourceNotices>; deadline: number }) {
  it('a note written through B reaches the stream on A', async (t) => {
    const { call, seen, deadline } = setup();
    seen.updated.length = 0;
    await sleep(300);
    assert.deepEqual(seen.updated, [], 'nothing is told without a change');
    assert.equal((await call('live_note', { space_id: 'demo', category: 'decision', content: 'Release 3.2.1 ships on 2026-03-14.' })).status, 'created');
    const took = await within(deadline, () => seen.updated.includes('live-mem://demo/live'), 'resources/updated for the live notes');
    t.diagnostic(`the note told after ${took} ms`);
  });

  it('a consolidation committed through B: the file it wrote, the synthesis, the live notes, the list', async (t) => {
    const { call, seen, deadline } = setup();
    seen.updated.length = 0;
    const listed = seen.lists;
    const pkg = (await call('bank_consolidate', { space_id: 'demo' })) as unknown as { handle: string; prompt: string };
    const done = await call('bank_consolidate', { space_id: 'demo', handle: pkg.handle, plan: writePlan(pkg) });
    assert.equal(done.status, 'ok', JSON.stringify(done));
    const took = await within(deadline, () => URIS.every((uri) => seen.updated.includes(uri)) && seen.lists > listed, 'every notification of the commit');
    t.diagnostic(`the commit told after ${took} ms`);
  });

  it('a space created through B changes the list', async (t) => {
    const { call, seen, deadline } = setup();
    const listed = seen.lists;
    assert.equal((await call('space_create', { space_id: `made${Date.now() % 100_000}` })).status, 'created');
    const took = await within(deadline, () => seen.lists > listed, 'list_changed for a space created elsewhere');
    t.diagnostic(`the new space told after ${took} ms`);
  });
}

// A hang (a stream or a server that never closes) fails the suite in 3 minutes rather than holding CI.
describe('subscriptions/listen across two processes on one fs store (within 2 s)', { timeout: 180_000 }, () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let a: Client;
  let b: Awaited<ReturnType<typeof spawnServer>>;
  let stream: McpSubscription;
  let seen: ReturnType<typeof recordResourceNotices>;

  before(async () => {
    home = await tempDir();
    const env = { LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' };
    b = await spawnServer({ ...env, LIVE_MEM_AGENT: 'bob', LIVE_MEM_TOOLS: 'admin' });
    assert.equal((await b.call('space_create', { space_id: 'demo' })).status, 'created');
    assert.equal((await b.call('live_note', { space_id: 'demo', category: 'observation', content: 'The API listens on port 8443.' })).status, 'created');
    a = modernClient();
    const processEnv = { PATH: process.env.PATH ?? '', HOME: home.dir, ...env, LIVE_MEM_AGENT: 'alice' };
    await a.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env: processEnv, stderr: 'ignore' }));
    assert.equal(a.getProtocolEra(), 'modern');
    seen = recordResourceNotices(a);
    stream = await a.listen(FILTER);
    assert.deepEqual(stream.honoredFilter, FILTER);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await home?.remove();
  });

  checks(() => ({ call: b.call, seen, deadline: 2_000 }));

  it('closed, the stream is told nothing more', async () => {
    await stream.close();
    assert.equal(await stream.closed, 'local');
    seen.updated.length = 0;
    await b.call('live_note', { space_id: 'demo', category: 'todo', content: 'write the changelog' });
    await sleep(1_500);
    assert.deepEqual(seen.updated, []);
  });
});

const s3 = requireS3OrSkip('subscriptions/listen on S3');
if (s3) {
  const INTERVAL_MS = 500;
  describe(`subscriptions/listen across two team servers on one radosgw bucket (LIVE_MEM_WATCH_INTERVAL_MS=${INTERVAL_MS}, within the interval + 2 s)`, {
    timeout: 180_000,
  }, () => {
    const prefix = uniqueS3Prefix('listen');
    let home: Awaited<ReturnType<typeof tempDir>>;
    let serverA: HttpServer;
    let serverB: HttpServer;
    let reader: Client;
    let stranger: Client;
    let writer: Client;
    let seen: ReturnType<typeof recordResourceNotices>;
    let seenStranger: ReturnType<typeof recordResourceNotices>;
    const connect = async (server: HttpServer, token: string) => {
      const client = modernClient();
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      assert.equal(client.getProtocolEra(), 'modern');
      return client;
    };

    before(async () => {
      await ensureS3Bucket(s3);
      home = await tempDir();
      const driver = createS3Driver({ ...s3DriverOptions(s3), prefix });
      const core = createCore({ storage: driver });
      const owner = ownerCaller('owner');
      await core.spaces.create(owner, { space_id: 'demo' });
      await core.spaces.create(owner, { space_id: 'other' });
      await core.notes.write(owner, { space_id: 'demo', category: 'observation', content: 'The API listens on port 8443.' });
      const tokenOf = async (name: string, permissions: string, space_ids: string) => (await core.auth.create(owner, { name, permissions, space_ids })).token;
      const readAll = await tokenOf('reader', 'read', '*');
      const otherOnly = await tokenOf('stranger', 'read', 'other');
      const write = await tokenOf('writer', 'read,write,admin', '*');
      await driver.close?.();
      const env = { ...s3ProcessEnv(s3, prefix), LIVE_MEM_HOME: home.dir, LIVE_MEM_WATCH_INTERVAL_MS: String(INTERVAL_MS) };
      [serverA, serverB] = await Promise.all([startHttpServer(env), startHttpServer(env)]);
      reader = await connect(serverA, readAll);
      stranger = await connect(serverA, otherOnly);
      writer = await connect(serverB, write);
      seen = recordResourceNotices(reader);
      seenStranger = recordResourceNotices(stranger);
      assert.deepEqual((await reader.listen(FILTER)).honoredFilter, FILTER);
      assert.deepEqual(
        (await stranger.listen(FILTER)).honoredFilter,
        { resourcesListChanged: true },
        "demo's URIs are not acknowledged to a token of another space",
      );
    });
    after(async () => {
      await Promise.all([reader?.close(), stranger?.close(), writer?.close()]);
      await Promise.all([serverA?.stop(), serverB?.stop()]);
      const driver = createS3Driver({ ...s3DriverOptions(s3), prefix });
      await driver.deleteMany(await listKeys(driver, ''));
      await driver.close?.();
      await home?.remove();
    });

    checks(() => ({ call: toolCaller(writer as never), seen, deadline: INTERVAL_MS + 2_000 }));

    it('a token of another space heard nothing of demo, nor of spaces it may not read', () => {
      assert.deepEqual(seenStranger, { updated: [], lists: 0 });
    });
  });
}
