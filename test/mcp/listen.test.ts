/**
 * `subscriptions/listen` (MCP 2026-07-28) fed by the change feed, in process: a stdio connection
 * (serveConnection over the SDK's InMemoryTransport) and the HTTP endpoint (createMcpHttp behind the
 * front door, on a free port), each on an fs store that a second core writes to as another process
 * would. A stream hears of the URIs it asked for and of spaces created, only for what its caller may
 * read (its acknowledged filter says so); once it closes the feed watches nothing; over HTTP an open
 * stream does not hold its token's one call in flight, and a token revoked ends its stream at the next change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Caller } from '../../src/core/caller.js';
import { type Core, createCore } from '../../src/core/core.js';
import { listenGuarded } from '../../src/http/listen.js';
import { createMcpHttp } from '../../src/mcp/http.js';
import { serveConnection } from '../../src/mcp/stdio.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { owner } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep, until } from '../helpers/wait.js';
import { recordResourceNotices } from '../helpers/resource-notices.js';

const LIVE = 'live-mem://demo/live';
const modernClient = () => new Client({ name: 'listen-test', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });

describe('subscriptions/listen fed by the change feed, in process', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let a: Core;
  let b: Core;
  before(async () => {
    home = await tempDir();
    a = createCore({ storage: createFsDriver(home.dir), watchIntervalMs: 50 });
    b = createCore({ storage: createFsDriver(home.dir) });
    await b.spaces.create(owner, { space_id: 'demo' });
    await b.spaces.create(owner, { space_id: 'other' });
  });
  after(async () => {
    a.feed.close();
    await home.remove();
  });

  /** A modern client on a stdio connection of core A whose caller is `caller`. */
  async function stdioClient(caller: Caller) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const handle = serveConnection({ core: a, version: '0.0.0-test', logger: a.context.logger, resolveCaller: () => caller }, serverSide);
    const client = modernClient();
    await client.connect(clientSide);
    const close = async () => {
      await client.close();
      await handle.close();
    };
    return { client, close };
  }

  it('stdio: a note written by another core, a space created; nothing watched once the stream closes', async () => {
    const { client, close } = await stdioClient(owner);
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const seen = recordResourceNotices(client);
      assert.deepEqual(a.feed.watching(), [], 'nothing watched before a stream asks');
      const stream = await client.listen({ resourceSubscriptions: [LIVE], resourcesListChanged: true });
      assert.deepEqual(stream.honoredFilter, { resourceSubscriptions: [LIVE], resourcesListChanged: true });
      assert.deepEqual(a.feed.watching().sort(), ['*', 'demo']);
      await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'from another process' });
      await until(() => seen.updated.includes(LIVE), 'resources/updated');
      await b.spaces.create(owner, { space_id: 'fresh' });
      await until(() => seen.lists > 0, 'list_changed');
      await stream.close();
      await until(() => a.feed.watching().length === 0, 'the feed left idle');
    } finally {
      await close();
    }
  });

  it('stdio: a caller limited to another space is acknowledged nothing of this one and hears nothing', async () => {
    const limited: Caller = { agent: 'o', permissions: new Set(['read']), spaces: new Set(['other']), canChooseAgent: false };
    const { client, close } = await stdioClient(limited);
    try {
      const seen = recordResourceNotices(client);
      const stream = await client.listen({ resourceSubscriptions: [LIVE, 'live-mem://other/live'], resourcesListChanged: true });
      assert.deepEqual(stream.honoredFilter, { resourceSubscriptions: ['live-mem://other/live'], resourcesListChanged: true });
      assert.deepEqual(a.feed.watching().sort(), ['*', 'other']);
      await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'not for them' });
      await b.spaces.create(owner, { space_id: 'unseen' });
      await sleep(400);
      assert.deepEqual(seen, { updated: [], lists: 0 });
      await stream.close();
      await until(() => a.feed.watching().length === 0, 'the feed left idle');
    } finally {
      await close();
    }
  });

  it('HTTP: per-token delivery, an open stream holds no call in flight, the last stream closing stops the checks', async () => {
    const demo = (await a.auth.create(owner, { name: 'demo', permissions: 'read,write', space_ids: 'demo' })).token;
    const other = (await a.auth.create(owner, { name: 'other', permissions: 'read', space_ids: 'other' })).token;
    const mcp = await createMcpHttp({ core: a, version: '0.0.0-test', logger: a.context.logger, authenticate: (token) => a.auth.resolve(token) });
    const limits = { maxConnections: 16, maxInFlight: 1, ratePerMinute: 0, authFailuresPerMinute: 0 };
    const server = await listenGuarded({ host: '127.0.0.1', port: 0, logger: a.context.logger, limits, ...mcp.mount });
    const connect = async (token: string) => {
      const client = modernClient();
      const url = new URL(`${server.origin}/mcp`);
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client;
    };
    const mine = await connect(demo);
    const theirs = await connect(other);
    try {
      const seenMine = recordResourceNotices(mine);
      const seenTheirs = recordResourceNotices(theirs);
      const filter = { resourceSubscriptions: [LIVE], resourcesListChanged: true };
      const streamMine = await mine.listen(filter);
      const streamTheirs = await theirs.listen(filter);
      assert.deepEqual(streamMine.honoredFilter, filter);
      assert.deepEqual(streamTheirs.honoredFilter, { resourcesListChanged: true }, 'a URI its token may not read is not acknowledged');
      // maxInFlight 1: the open stream does not hold it.
      const read = await mine.callTool({ name: 'live_read', arguments: { space_id: 'demo' } });
      assert.notEqual(read.isError, true, JSON.stringify(read));
      await b.notes.write(owner, { space_id: 'demo', category: 'decision', content: 'told over HTTP' });
      await until(() => seenMine.updated.includes(LIVE), 'resources/updated over HTTP');
      await b.spaces.create(owner, { space_id: 'demo2' });
      await sleep(400);
      assert.equal(seenMine.lists, 0, 'a space this token may not read is not told');
      assert.deepEqual(seenTheirs, { updated: [], lists: 0 });
      await streamMine.close();
      await until(() => !a.feed.watching().includes('demo'), 'demo no longer watched');
      assert.deepEqual(a.feed.watching(), ['*'], 'the other stream still watches the list');
      await streamTheirs.close();
      await until(() => a.feed.watching().length === 0, 'the feed left idle');

      // A token revoked while its stream is open: the next change ends the stream, untold.
      const doomed = await a.auth.create(owner, { name: 'doomed', permissions: 'read', space_ids: 'demo' });
      const revokedClient = await connect(doomed.token);
      const seenRevoked = recordResourceNotices(revokedClient);
      const streamRevoked = await revokedClient.listen({ resourceSubscriptions: [LIVE] });
      await a.auth.revoke(owner, { token: 'doomed' });
      await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'after the revocation' });
      assert.equal(await streamRevoked.closed, 'graceful');
      assert.deepEqual(seenRevoked, { updated: [], lists: 0 });
      await until(() => a.feed.watching().length === 0, 'the feed left idle');
      await revokedClient.close();
    } finally {
      await mine.close();
      await theirs.close();
      await server.close();
      await mcp.close();
    }
  });
});
