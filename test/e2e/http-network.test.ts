/**
 * A team server behind real networks: `live-mem serve --http` (and `ui`) bound off loopback, reached
 * by names it cannot know (a DNS name, a Docker port mapping, a reverse proxy), narrowed by
 * --allowed-hosts, behind a proxy with --trust-proxy. All traffic stays on this machine: the servers
 * bind 0.0.0.0 or 127.0.0.1 and are reached at 127.0.0.1 with the Host header a client would send.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa, type ResultPromise } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const NAME = 'memory.example.internal';

/** A tools/list POST to 127.0.0.1:`port` with the given headers (Host included: what a proxy or a DNS name would send). */
function post(port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
  });
}

interface Running {
  port: number;
  /** The URLs of the start-up line. */
  urls: string[];
  stop(): Promise<void>;
}

/** `live-mem <args>` with only `env`, until its log says it serves; the URLs are those `announce` finds in its output then. */
async function start(args: string[], env: Record<string, string>, announce: RegExp): Promise<Running> {
  const child: ResultPromise = execa(process.execPath, [BIN, ...args, '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    extendEnv: false,
    reject: false,
  });
  const output = { stdout: '', stderr: '' };
  const line = await new Promise<string>((resolve, reject) => {
    const look = () => {
      // Both commands log "serving …" on stderr after writing their URLs (stdout for ui).
      const match = /serving /.test(output.stderr) ? announce.exec(output.stdout + output.stderr) : null;
      if (match) resolve(match[0]);
    };
    child.stderr?.on('data', (chunk: Buffer) => {
      output.stderr += chunk.toString();
      look();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output.stdout += chunk.toString();
      look();
    });
    void child.then(() => reject(new Error(`exited before announcing: ${output.stdout}${output.stderr}`)));
  });
  const urls = [...line.matchAll(/http:\/\/[^\s,]+/g)].map((m) => m[0]);
  return {
    port: Number(new URL(urls[0] as string).port),
    urls,
    async stop() {
      child.kill('SIGTERM');
      await child;
    },
  };
}
const SERVE_LINE = /serving MCP over Streamable HTTP at .* and the web viewer/;

describe('a team server behind real networks', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let token = '';
  const servers: Running[] = [];
  const serve = async (args: string[], env: Record<string, string> = {}) => {
    const server = await start(['serve', '--http', ...args], { LIVE_MEM_HOME: home.dir, LIVE_MEM_AUTH: 'required', ...env }, SERVE_LINE);
    servers.push(server);
    return server;
  };

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    token = (await core.auth.create(owner, { name: 'teammate', permissions: 'read,write', space_ids: 'alpha' })).token;
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await home?.remove();
  });

  it('refuses to start off loopback without auth required, `*` without auth required, and a malformed host list (exit 2)', async () => {
    const run = (args: string[], env: Record<string, string> = {}) =>
      execa(process.execPath, [BIN, ...args, '--port', '0'], {
        env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, ...env },
        extendEnv: false,
        reject: false,
        timeout: 20_000,
      });
    const open = await run(['serve', '--http', '--host', '0.0.0.0']);
    assert.equal(open.exitCode, 2, open.stderr);
    assert.match(open.stderr, /binding 0\.0\.0\.0 serves other machines: set LIVE_MEM_AUTH=required/);
    const star = await run(['serve', '--http', '--allowed-hosts', '*']);
    assert.equal(star.exitCode, 2, star.stderr);
    assert.match(star.stderr, /--allowed-hosts \(LIVE_MEM_ALLOWED_HOSTS\) \* accepts any Host header.*LIVE_MEM_AUTH=required/);
    const starEnv = await run(['ui'], { LIVE_MEM_ALLOWED_HOSTS: '*' });
    assert.equal(starEnv.exitCode, 2, starEnv.stderr);
    assert.match(starEnv.stderr, /LIVE_MEM_ALLOWED_HOSTS\) \* accepts any Host header/);
    const bad = await run(['serve', '--http', '--allowed-hosts', 'https://memory.example.internal']);
    assert.equal(bad.exitCode, 2, bad.stderr);
    assert.match(bad.stderr, /--allowed-hosts must be host names/);
  });

  it('bound to 0.0.0.0 with auth required: prints usable URLs, accepts any Host with a token, and still needs the token', async () => {
    const server = await serve(['--host', '0.0.0.0']);
    for (const url of server.urls) assert.doesNotMatch(url, /0\.0\.0\.0/);
    // Loopback, and each IPv4 address of this machine's interfaces.
    const addresses = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).filter((e) => !e.internal && e.family === 'IPv4'));
    for (const address of ['127.0.0.1', ...addresses.map((e) => e.address)])
      assert.ok(server.urls.includes(`http://${address}:${server.port}/mcp`), `${address} in ${server.urls.join(' ')}`);

    const bearer = { authorization: `Bearer ${token}` };
    assert.equal((await post(server.port, { host: NAME, ...bearer })).status, 200);
    assert.equal((await post(server.port, { host: `${NAME}:8443`, origin: `https://${NAME}:8443`, ...bearer })).status, 200);
    assert.equal((await post(server.port, { host: 'localhost:9999', ...bearer })).status, 200, 'a Docker port mapping');
    assert.equal((await post(server.port, { host: NAME })).status, 401, 'no token, no access');

    // Stateless HTTP promises no notification it cannot send; the SDK client agrees.
    const client = new Client({ name: 'network-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.urls[0] as string), { requestInit: { headers: bearer } }));
    try {
      const capabilities = client.getServerCapabilities();
      assert.ok(capabilities?.resources, 'resources are still listed and read');
      assert.notEqual(capabilities?.resources?.subscribe, true);
      assert.notEqual(capabilities?.resources?.listChanged, true);
      assert.notEqual(capabilities?.tools?.listChanged, true);
      assert.notEqual(capabilities?.prompts?.listChanged, true);
      await assert.rejects(client.subscribeResource({ uri: 'live-mem://alpha/synthesis' }), /Method not found/);
      assert.ok((await client.listResources()).resources.length > 0);
    } finally {
      await client.close();
    }
  });

  it('--allowed-hosts (or LIVE_MEM_ALLOWED_HOSTS) narrows the Hosts and Origins accepted', async () => {
    const bearer = { authorization: `Bearer ${token}` };
    for (const server of [
      await serve(['--host', '0.0.0.0', '--allowed-hosts', `${NAME},team.example.internal:8443`]),
      await serve(['--host', '0.0.0.0'], { LIVE_MEM_ALLOWED_HOSTS: `${NAME}, team.example.internal:8443` }),
    ]) {
      assert.equal((await post(server.port, { host: NAME, ...bearer })).status, 200);
      assert.equal((await post(server.port, { host: `${NAME}:443`, origin: `https://${NAME}`, ...bearer })).status, 200, 'a name: any port');
      assert.equal((await post(server.port, { host: 'team.example.internal:8443', ...bearer })).status, 200);
      assert.equal((await post(server.port, { host: `127.0.0.1:${server.port}`, ...bearer })).status, 200, 'its own addresses');
      const other = await post(server.port, { host: 'other.example.internal', ...bearer });
      assert.equal(other.status, 403);
      assert.match(other.body, /forbidden Host header/);
      assert.equal((await post(server.port, { host: 'team.example.internal:9000', ...bearer })).status, 403, 'name:port: that port only');
      assert.equal((await post(server.port, { host: NAME, origin: 'https://evil.example', ...bearer })).status, 403);
    }
  });

  it('`*` with auth required accepts any Host on loopback too', async () => {
    const server = await serve(['--allowed-hosts', '*']);
    assert.equal((await post(server.port, { host: 'anything.example', authorization: `Bearer ${token}` })).status, 200);
  });

  it('X-Forwarded-Host and -For are ignored without --trust-proxy', async () => {
    const server = await serve(['--allowed-hosts', NAME], { LIVE_MEM_HTTP_RATE_LIMIT: '1' });
    const own = `127.0.0.1:${server.port}`;
    assert.equal((await post(server.port, { host: 'evil.example', 'x-forwarded-host': NAME })).status, 403);
    // Passes the Host check (401: no token), and spends this address's one request a minute…
    assert.equal((await post(server.port, { host: own, 'x-forwarded-host': 'evil.example', 'x-forwarded-for': '10.0.0.1' })).status, 401);
    // …which another X-Forwarded-For does not give back.
    assert.equal((await post(server.port, { host: own, 'x-forwarded-for': '10.0.0.2' })).status, 429);
  });

  it('with --trust-proxy, X-Forwarded-Host is checked as the Host and the last X-Forwarded-For address is the caller', async () => {
    const server = await serve(['--allowed-hosts', NAME, '--trust-proxy'], { LIVE_MEM_HTTP_RATE_LIMIT: '1' });
    const upstream = `127.0.0.1:${server.port}`; // what a proxy sends as Host to its upstream
    assert.equal((await post(server.port, { host: upstream, 'x-forwarded-host': 'evil.example', 'x-forwarded-for': '10.0.0.9' })).status, 403);
    assert.equal((await post(server.port, { host: upstream, 'x-forwarded-host': NAME, 'x-forwarded-for': '10.0.0.1' })).status, 401);
    // The proxy appends the address it saw: a client cannot pick its bucket by sending its own list.
    assert.equal((await post(server.port, { host: upstream, 'x-forwarded-host': NAME, 'x-forwarded-for': '10.0.0.1, 10.0.0.2' })).status, 401);
    assert.equal((await post(server.port, { host: upstream, 'x-forwarded-host': NAME, 'x-forwarded-for': '10.0.0.2, 10.0.0.1' })).status, 429);
    assert.equal(
      (
        await post(server.port, {
          host: upstream,
          'x-forwarded-host': NAME,
          'x-forwarded-proto': 'https',
          origin: `https://${NAME}`,
          authorization: `Bearer ${token}`,
        })
      ).status,
      200,
    );
  });

  it('`ui` bound to 0.0.0.0 prints usable URLs', async () => {
    const ui = await start(
      ['ui', '--host', '0.0.0.0'],
      { LIVE_MEM_HOME: home.dir, LIVE_MEM_AUTH: 'required' },
      /live-mem web viewer at \S+\n( {2}also at \S+\n)*/,
    );
    servers.push(ui);
    assert.ok(ui.urls.includes(`http://127.0.0.1:${ui.port}/`), ui.urls.join(' '));
    for (const url of ui.urls) assert.doesNotMatch(url, /0\.0\.0\.0/);
  });
});
