/**
 * What one HTTP caller may hold: requests in flight and a rate per token (429 past them, the other
 * tokens unaffected), and connections per server (past the cap, closed as they arrive).
 * `live-mem serve --http` as a process; counts and status codes, never durations.
 */
import assert from 'node:assert/strict';
import { type ClientRequest, request } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** A server on a fresh store with tokens `a` and `b`, and the given environment. */
async function startServer(env: Record<string, string>) {
  const home = await tempDir();
  const core = createCore({ storage: createFsDriver(home.dir) });
  await core.spaces.create(owner, { space_id: 'alpha' });
  const tokens = {
    a: (await core.auth.create(owner, { name: 'agent-a', permissions: 'read,write', space_ids: 'alpha' })).token,
    b: (await core.auth.create(owner, { name: 'agent-b', permissions: 'read,write', space_ids: 'alpha' })).token,
  };
  const server = await startHttpServer({ LIVE_MEM_HOME: home.dir, ...env });
  return {
    origin: server.origin,
    tokens,
    async stop() {
      await server.stop();
      await home.remove();
    },
  };
}

const collect = (req: ClientRequest): Promise<Answer> =>
  new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
  });

const open = (url: string, token: string, extra: Record<string, string> = {}): ClientRequest =>
  request(url, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...extra },
  });

/** One whole request. */
const post = (url: string, token: string, body = LIST): Promise<Answer> => {
  const req = open(url, token);
  const answer = collect(req);
  req.end(body);
  return answer;
};

/**
 * A request that holds its place: the server has admitted it when it says "100 Continue" (it takes
 * the place before answering that), and it waits for a body that comes only with `finish`.
 */
async function held(url: string, token: string, body = LIST) {
  const req = open(url, token, { expect: '100-continue', 'content-length': String(Buffer.byteLength(body)) });
  const answer = collect(req);
  req.flushHeaders();
  await new Promise<void>((resolve, reject) => {
    req.once('continue', resolve);
    answer.then((a) => reject(new Error(`answered ${a.status} before 100 Continue: ${a.body}`)), reject);
  });
  return {
    finish: () => {
      req.end(body);
      return answer;
    },
  };
}

describe('HTTP limits per token', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_MAX_IN_FLIGHT: '2', LIVE_MEM_HTTP_RATE_LIMIT: '0' });
  });
  after(async () => server?.stop());

  it('answers 429 to a token past its requests in flight, on /mcp and on the viewer API; another token is served', async () => {
    const mcp = `${server.origin}/mcp`;
    const holding = [await held(mcp, server.tokens.a), await held(mcp, server.tokens.a)];

    const extra = await post(mcp, server.tokens.a);
    assert.equal(extra.status, 429);
    assert.ok(Number(extra.headers['retry-after']) >= 1, 'a Retry-After');
    const rpc = JSON.parse(extra.body) as { jsonrpc: string; error: { message: string } };
    assert.equal(rpc.jsonrpc, '2.0');
    assert.match(rpc.error.message, /too many requests: at most 2 at once per token/);
    const viewer = await post(`${server.origin}/api/tools/space_list`, server.tokens.a, '{}');
    assert.equal(viewer.status, 429);
    assert.equal((JSON.parse(viewer.body) as { status: string }).status, 'error');

    const other = await post(mcp, server.tokens.b);
    assert.equal(other.status, 200, other.body);
    assert.match(other.body, /live_note/);

    // The held requests are served in full.
    for (const answer of await Promise.all(holding.map((h) => h.finish()))) assert.equal(answer.status, 200);
    assert.ok(!extra.body.includes(server.tokens.a) && !viewer.body.includes(server.tokens.a), 'no token echoed');
  });
});

describe('HTTP rate per token', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_RATE_LIMIT: '2' });
  });
  after(async () => server?.stop());

  it('answers 429 with Retry-After past LIVE_MEM_HTTP_RATE_LIMIT requests a minute; another token is served', async () => {
    const mcp = `${server.origin}/mcp`;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(mcp, server.tokens.a)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const refused = await post(mcp, server.tokens.a);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.match(refused.body, /at most 2 a minute per token/);
    assert.equal((await post(mcp, server.tokens.b)).status, 200);
  });
});

describe('HTTP connections', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_MAX_CONNECTIONS: '3' });
  });
  after(async () => server?.stop());

  it('closes the connections past LIVE_MEM_HTTP_MAX_CONNECTIONS and serves the others', async () => {
    const { hostname, port } = new URL(server.origin);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const socket = tcpConnect(Number(port), hostname);
        socket.on('error', () => undefined); // a refused one may reset
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        sockets.push(socket);
      }
      // Every socket asks; an accepted one answers (401: no token), a refused one closes with nothing.
      const outcomes = await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<string>((resolve) => {
              let data = '';
              socket.on('data', (chunk: Buffer) => {
                data += chunk.toString();
                if (data.includes('\r\n')) resolve(data.split('\r\n')[0] as string);
              });
              socket.once('close', () => resolve(data === '' ? 'closed' : (data.split('\r\n')[0] as string)));
              socket.write(
                `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${LIST.length}\r\n\r\n${LIST}`,
              );
            }),
        ),
      );
      assert.deepEqual(outcomes, ['HTTP/1.1 401 Unauthorized', 'HTTP/1.1 401 Unauthorized', 'HTTP/1.1 401 Unauthorized', 'closed', 'closed']);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
