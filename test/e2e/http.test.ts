/**
 * MCP over Streamable HTTP: `live-mem serve --http` as a process, the SDK's client over real HTTP on
 * 127.0.0.1; then four processes creating tokens at once (fs and radosgw).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { BIN, startHttpServer, type HttpServer } from '../helpers/mcp-client.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');

/** A raw request, to send what a well-behaved client never would. */
function raw(
  url: string,
  options: { headers?: Record<string, string>; body?: string; method?: string } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
  });
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'http-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string };

describe('MCP over Streamable HTTP', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer | undefined;
  let url = '';
  const tokens: Record<string, string> = {};

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    tokens.writer = (await core.auth.create(owner, { name: 'writer', permissions: 'read,write', space_ids: 'alpha' })).token;
    tokens.reader = (await core.auth.create(owner, { name: 'reader', permissions: 'read', space_ids: 'alpha' })).token;
    // Ten calls per token at once below: above the default 8 in flight per token (test/http/limits.test.ts tests that limit).
    server = await startHttpServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_HTTP_MAX_IN_FLIGHT: '32' });
    url = server.url;
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it('binds to loopback and serves an authenticated client', async () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connect(url, tokens.writer as string);
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 12, 'the agent profile, by default over HTTP (test/e2e/http-tools.test.ts)');
      assert.equal((await call(client, 'live_note', { space_id: 'alpha', category: 'todo', content: 'over http', agent: 'someone-else' })).agent, 'writer');
      assert.equal((await call(client, 'live_read', { space_id: 'alpha' })).total, 1);
    } finally {
      await client.close();
    }
  });

  it('refuses a request without a bearer token (401), a wrong one (403), a token in the query string (400)', async () => {
    const missing = await raw(url);
    assert.equal(missing.status, 401);
    assert.match(String(missing.headers['www-authenticate']), /^Bearer/);
    const wrong = await raw(url, { headers: { authorization: 'Bearer lm_wrong' } });
    assert.equal(wrong.status, 403);
    const query = await raw(`${url}?token=${tokens.writer}`, { headers: { authorization: `Bearer ${tokens.writer}` } });
    assert.equal(query.status, 400);
    assert.match(query.body, /query string/);
    assert.ok(!query.body.includes(tokens.writer as string));
  });

  it('checks Host and Origin against DNS rebinding', async () => {
    const auth = { authorization: `Bearer ${tokens.writer}` };
    assert.equal((await raw(url, { headers: { ...auth, host: 'evil.example:80' } })).status, 403);
    assert.equal((await raw(url, { headers: { ...auth, origin: 'http://evil.example' } })).status, 403);
    const port = new URL(url).port;
    assert.equal((await raw(url, { headers: { ...auth, host: `localhost:${port}`, origin: `http://localhost:${port}` } })).status, 200);
  });

  it('serves several clients at once, each with its own rights', async () => {
    const [writer, reader] = await Promise.all([connect(url, tokens.writer as string), connect(url, tokens.reader as string)]);
    try {
      const [w, r] = await Promise.all([call(writer, 'system_whoami'), call(reader, 'system_whoami')]);
      assert.equal(w.agent, 'writer');
      assert.equal(r.agent, 'reader');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2
            ? call(reader, 'live_note', { space_id: 'alpha', category: 'todo', content: `r${i}` })
            : call(writer, 'live_note', { space_id: 'alpha', category: 'todo', content: `w${i}` }),
        ),
      );
      assert.deepEqual([...new Set(results.map((x) => x.status))].sort(), ['created', 'forbidden']);
      assert.equal(results.filter((x) => x.status === 'created').length, 10);
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it('applies a revocation to the next request of an open session', async () => {
    const client = await connect(url, tokens.reader as string);
    try {
      assert.equal((await call(client, 'space_list')).status, 'ok');
      await createCore({ storage: createFsDriver(home.dir) }).auth.revoke(owner, { token: 'reader' });
      await assert.rejects(client.callTool({ name: 'space_list', arguments: {} }), /403|forbidden/i);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});

describe('four processes creating tokens at once', () => {
  const race = (label: string, makeStore: () => Promise<{ env: Record<string, string>; storage: StorageDriver; cleanup(): Promise<void> }>) =>
    it(`loses none (${label})`, async () => {
      const store = await makeStore();
      try {
        const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...store.env };
        await Promise.all(
          Array.from({ length: 4 }, async (_, p) => {
            for (let i = 0; i < 5; i++) {
              const run = await execa(process.execPath, [BIN, 'token', 'create', `p${p}-t${i}`, '-p', 'read', '-s', '*', '--json'], {
                env,
                extendEnv: false,
                reject: false,
              });
              assert.equal(run.exitCode, 0, run.stderr);
            }
          }),
        );
        const list = await createCore({ storage: store.storage }).auth.list(owner);
        assert.equal(list.total, 20);
      } finally {
        await store.cleanup();
      }
    });

  race('fs', async () => {
    const home = await tempDir();
    return { env: { LIVE_MEM_HOME: home.dir }, storage: createFsDriver(home.dir), cleanup: home.remove };
  });
  const s3 = requireS3OrSkip('token race on S3');
  if (s3) {
    race('radosgw', async () => {
      const harness = await makeS3Harness();
      return { env: s3ProcessEnv(s3, harness.prefix), storage: harness.driver, cleanup: harness.cleanup };
    });
  }
});
