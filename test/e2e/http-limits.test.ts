/**
 * What one HTTP caller may hold: calls in flight and a rate per token, each call of a JSON-RPC batch
 * counted (429 past them, the other tokens unaffected); failed authentications per address; and
 * connections per server, where those no token has used give way to token holders.
 * `live-mem serve --http` as a process, over real sockets; counts and status codes, never durations.
 */
import assert from 'node:assert/strict';
import { type ClientRequest, request } from 'node:http';
import { randomBytes } from 'node:crypto';
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

/** A JSON-RPC batch of `n` memory_search calls. */
const searches = (n: number): string =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'memory_search', arguments: { space_id: 'alpha', query: `term ${i}` } },
    })),
  );

/** The JSON-RPC answers of a 200 (an SSE stream, one event per answer) that carry a result. */
const results = (answer: Answer): number =>
  answer.body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as { result?: unknown })
    .filter((message) => message.result !== undefined).length;

const rpcError = (answer: Answer) => (JSON.parse(answer.body) as { jsonrpc: string; id: null; error: { code: number; message: string } }).error;

describe('HTTP limits count calls: each request of a JSON-RPC batch', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_RATE_LIMIT: '20', LIVE_MEM_HTTP_MAX_IN_FLIGHT: '100' });
  });
  after(async () => server?.stop());

  it('a batch larger than the rate is refused whole (400) and costs nothing; one that fits is served; the next past the bucket gets 429', async () => {
    const mcp = `${server.origin}/mcp`;
    const huge = await post(mcp, server.tokens.a, searches(100));
    assert.equal(huge.status, 400, huge.body);
    assert.equal(rpcError(huge).code, -32600);
    assert.match(rpcError(huge).message, /a batch of 100 calls is more than the 20 a token may make a minute/);

    // Nothing was taken by the refusal: a whole minute's worth still fits.
    const full = await post(mcp, server.tokens.a, searches(20));
    assert.equal(full.status, 200, full.body);
    assert.equal(results(full), 20);

    const over = await post(mcp, server.tokens.a, searches(10));
    assert.equal(over.status, 429, over.body);
    assert.ok(Number(over.headers['retry-after']) >= 1, 'a Retry-After');
    assert.equal(JSON.parse(over.body).id, null, 'the JSON-RPC error answers the request, not one message');
    assert.match(rpcError(over).message, /at most 20 a minute per token/);

    // Another token has its own bucket.
    const other = await post(mcp, server.tokens.b, searches(5));
    assert.equal(other.status, 200, other.body);
    assert.equal(results(other), 5);
  });
});

describe('HTTP batches against calls in flight, and protocol versions without batches', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_MAX_IN_FLIGHT: '2', LIVE_MEM_HTTP_RATE_LIMIT: '0' });
  });
  after(async () => server?.stop());

  it('a batch counts each call in flight: larger than the cap, 400; past what is left of it, 429', async () => {
    const mcp = `${server.origin}/mcp`;
    const three = await post(mcp, server.tokens.a, searches(3));
    assert.equal(three.status, 400, three.body);
    assert.match(rpcError(three).message, /a batch of 3 calls is more than the 2 a token may have in flight at once/);

    const holding = await held(mcp, server.tokens.a);
    const two = await post(mcp, server.tokens.a, searches(2));
    assert.equal(two.status, 429, two.body);
    assert.match(rpcError(two).message, /at most 2 at once per token/);
    assert.equal((await holding.finish()).status, 200);

    const fits = await post(mcp, server.tokens.a, searches(2));
    assert.equal(fits.status, 200, fits.body);
    assert.equal(results(fits), 2);
  });

  it('refuses a batch in MCP 2025-06-18 and later (400, -32600), which have none; one message per request is served', async () => {
    const mcp = `${server.origin}/mcp`;
    for (const version of ['2025-06-18', '2025-11-25']) {
      const req = open(mcp, server.tokens.a, { 'mcp-protocol-version': version });
      const answer = collect(req);
      req.end(searches(1));
      const refused = await answer;
      assert.equal(refused.status, 400, refused.body);
      assert.equal(rpcError(refused).code, -32600);
      assert.match(rpcError(refused).message, new RegExp(`MCP ${version} has no JSON-RPC batches`));
    }
    const req = open(mcp, server.tokens.a, { 'mcp-protocol-version': '2025-06-18' });
    const answer = collect(req);
    req.end(LIST);
    assert.equal((await answer).status, 200);
  });
});

describe('HTTP failed authentications per address', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_AUTH_FAILURES: '2' });
  });
  after(async () => server?.stop());

  it('bogus tokens get 429 with Retry-After once past the limit; a token already served from the address still is', async () => {
    const mcp = `${server.origin}/mcp`;
    assert.equal((await post(mcp, server.tokens.a)).status, 200, 'token a, before the noise');
    const bogus = () => `lm_${randomBytes(32).toString('base64url')}`;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(mcp, bogus())).status);
    assert.deepEqual(statuses, [403, 403, 429, 429]);
    const refused = await post(mcp, bogus());
    assert.ok(Number(refused.headers['retry-after']) >= 1, 'a Retry-After');
    assert.match(rpcError(refused).message, /too many failed authentications from this address: at most 2 a minute/);
    // The viewer's API is behind the same door.
    assert.equal((await post(`${server.origin}/api/tools/space_list`, bogus(), '{}')).status, 429);

    assert.equal((await post(mcp, server.tokens.a)).status, 200, 'a token this server has authenticated is still served');
    // One it has not is refused without being looked up, as a guess would be (docs/security.md says why).
    assert.equal((await post(mcp, server.tokens.b)).status, 429);
  });
});

interface Connection {
  socket: Socket;
  /** Resolves when the connection is closed (by the server, here). */
  gone: Promise<void>;
}

/** Opens a TCP connection from `localAddress` (any 127.x.y.z is this machine) and waits until it is established. */
async function connectFrom(origin: string, localAddress = '127.0.0.1'): Promise<Connection> {
  const { hostname, port } = new URL(origin);
  const socket = tcpConnect({ port: Number(port), host: hostname, localAddress });
  socket.on('error', () => undefined); // one the server closes may reset
  const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    gone.then(() => reject(new Error('closed before it connected')));
  });
  return { socket, gone };
}

/** Sends one request on a raw connection and resolves with the answer's status line, or 'closed'. */
const ask = ({ socket, gone }: Connection, origin: string, token?: string): Promise<string> =>
  new Promise<string>((resolve) => {
    const { host } = new URL(origin);
    let data = '';
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString();
      if (data.includes('\r\n')) resolve(data.split('\r\n')[0] as string);
    });
    void gone.then(() => resolve(data === '' ? 'closed' : (data.split('\r\n')[0] as string)));
    const auth = token ? `Authorization: Bearer ${token}\r\n` : '';
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${LIST.length}\r\n\r\n${LIST}`,
    );
  });

describe('HTTP connections', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({});
  });
  after(async () => server?.stop());

  it('300 idle sockets from one address: past the cap its oldest are closed, and a token holder is still served', async () => {
    const connections: Connection[] = [];
    try {
      for (let i = 0; i < 300; i++) connections.push(await connectFrom(server.origin));
      const holder = await connectFrom(server.origin);
      connections.push(holder);
      assert.equal(await ask(holder, server.origin, server.tokens.a), 'HTTP/1.1 200 OK');
      // 256 at most: the 45 oldest of the idle ones were closed to make room, the newest are answered.
      await Promise.all(connections.slice(0, 45).map((connection) => connection.gone));
      assert.equal(await ask(connections[299] as Connection, server.origin), 'HTTP/1.1 401 Unauthorized');
    } finally {
      for (const { socket } of connections) socket.destroy();
    }
  });
});

describe('HTTP connections at the cap', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({ LIVE_MEM_HTTP_MAX_CONNECTIONS: '8' });
  });
  after(async () => server?.stop());

  it('past the cap, the address holding the most idle connections no token has used gives way, its oldest first', async () => {
    const connections: Connection[] = [];
    try {
      // Eight idle connections from four addresses: the server is full.
      for (const [address, count] of [
        ['127.0.0.2', 3],
        ['127.0.0.3', 2],
        ['127.0.0.4', 2],
        ['127.0.0.5', 1],
      ] as const)
        for (let i = 0; i < count; i++) connections.push(await connectFrom(server.origin, address));
      // A newcomer from another address: the oldest of 127.0.0.2, which holds the most, is closed for it.
      connections.push(await connectFrom(server.origin, '127.0.0.6'));
      await connections[0]?.gone;
      // A token holder: 127.0.0.2 still holds as many as any other (2), and held them first.
      const holder = await connectFrom(server.origin, '127.0.0.7');
      await connections[1]?.gone;
      assert.equal(await ask(holder, server.origin, server.tokens.a), 'HTTP/1.1 200 OK');
      const outcomes = await Promise.all(connections.slice(2).map((connection) => ask(connection, server.origin)));
      assert.deepEqual(outcomes, Array(outcomes.length).fill('HTTP/1.1 401 Unauthorized'));
    } finally {
      for (const { socket } of connections) socket.destroy();
    }
  });
});
