/**
 * `serve --http` answers every request with one server built at start-up (mcp/shared-transport.ts)
 * and caches the token file (core/auth/token-store.ts): tokens of different rights interleaving many
 * calls at once each get their own answers and rights, and a token revoked or narrowed by the CLI,
 * in another process, is refused on the very next request.
 */
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN, startHttpServer, type HttpServer } from '../helpers/mcp-client.js';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
type Answer = Record<string, unknown> & { status: string };

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'http-shared-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Answer;

describe('one HTTP server for every request', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer | undefined;
  let url = '';
  const tokens: Record<string, string> = {};
  const cli = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' }, extendEnv: false });

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    await core.spaces.create(owner, { space_id: 'beta' });
    for (const [name, permissions, space_ids] of [
      ['writer', 'read,write', 'alpha'],
      ['reader', 'read', 'alpha,beta'],
      ['doomed', 'read,write', 'alpha'],
      ['narrowed', 'read,write', 'alpha'],
    ] as const)
      tokens[name] = (await core.auth.create(owner, { name, permissions, space_ids })).token;
    server = await startHttpServer({
      LIVE_MEM_HOME: home.dir,
      LIVE_MEM_HTTP_RATE_LIMIT: '100000',
      LIVE_MEM_HTTP_MAX_IN_FLIGHT: '1000',
      LIVE_MEM_HTTP_MAX_CONNECTIONS: '1000',
    });
    url = server.url;
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it('keeps each caller to its own answers and rights across 400 interleaved calls of two tokens', async () => {
    // Four clients per token, each numbering its requests from the same first id.
    const writers = await Promise.all(Array.from({ length: 4 }, () => connect(url, tokens.writer as string)));
    const readers = await Promise.all(Array.from({ length: 4 }, () => connect(url, tokens.reader as string)));
    try {
      const rounds = Array.from({ length: 25 }, (_, round) =>
        [0, 1, 2, 3].flatMap((c) => {
          const writer = writers[c] as Client;
          const reader = readers[c] as Client;
          const content = `round ${round} client ${c}`;
          return [
            call(writer, 'live_note', { space_id: 'alpha', category: 'progress', content }).then((a) => ({ who: 'writer', tool: 'note', content, a })),
            call(reader, 'live_note', { space_id: 'alpha', category: 'progress', content: `reader ${content}` }).then((a) => ({
              who: 'reader',
              tool: 'note',
              content,
              a,
            })),
            call(writer, 'system_whoami').then((a) => ({ who: 'writer', tool: 'whoami', content, a })),
            call(reader, 'space_list').then((a) => ({ who: 'reader', tool: 'spaces', content, a })),
          ];
        }),
      );
      const answers = await Promise.all(rounds.flat());
      assert.equal(answers.length, 400);
      for (const { who, tool, content, a } of answers) {
        if (tool === 'note' && who === 'writer') {
          assert.equal(a.status, 'created', JSON.stringify(a));
          assert.equal(a.agent, 'writer');
        } else if (tool === 'note') assert.equal(a.status, 'forbidden', JSON.stringify(a));
        else if (tool === 'whoami') assert.deepEqual([a.agent, a.permissions, a.space_ids], ['writer', ['read', 'write'], ['alpha']]);
        else assert.deepEqual((a.spaces as Array<{ space_id: string }>).map((s) => s.space_id).sort(), ['alpha', 'beta'], content);
      }
      const read = await call(readers[0] as Client, 'live_read', { space_id: 'alpha', limit: 200 });
      assert.equal(read.total, 100);
      assert.ok((read.notes as Array<{ agent: string; content: string }>).every((n) => n.agent === 'writer' && !n.content.startsWith('reader')));
    } finally {
      await Promise.all([...writers, ...readers].map((client) => client.close()));
    }
  });

  it('refuses a token revoked by the CLI on the very next request, and applies narrowed rights at once', async () => {
    const doomed = await connect(url, tokens.doomed as string);
    const narrowed = await connect(url, tokens.narrowed as string);
    try {
      // Verified (and cached) several times first, concurrently.
      for (const answer of await Promise.all(Array.from({ length: 20 }, () => call(doomed, 'space_list')))) assert.equal(answer.status, 'ok');
      assert.equal((await call(narrowed, 'live_note', { space_id: 'alpha', category: 'todo', content: 'before' })).status, 'created');

      await cli('token', 'revoke', 'doomed');
      await assert.rejects(doomed.callTool({ name: 'space_list', arguments: {} }), /403|forbidden/i);

      await cli('token', 'update', 'narrowed', '-p', 'read');
      assert.equal((await call(narrowed, 'live_note', { space_id: 'alpha', category: 'todo', content: 'after' })).status, 'forbidden');
      assert.deepEqual((await call(narrowed, 'system_whoami')).permissions, ['read']);
    } finally {
      await Promise.all([doomed, narrowed].map((client) => client.close().catch(() => undefined)));
    }
  });
});

describe('progress over HTTP through the shared server', () => {
  it("sends a consolidation's progress to the request that asked for it, not to another client", async () => {
    const home = await tempDir();
    const llm = await startScriptedLlm([{ delayMs: 300, then: { reply: FIRST_PLAN } }]);
    let server: HttpServer | undefined;
    try {
      const core = createCore({ storage: createFsDriver(home.dir) });
      await core.spaces.create(owner, { space_id: 'proj' });
      for (let i = 0; i < 15; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
      const { token } = await core.auth.create(owner, { name: 'folder', permissions: 'read,write', space_ids: 'proj' });
      server = await startHttpServer({
        LIVE_MEM_HOME: home.dir,
        LIVE_MEM_LLM_BASE_URL: llm.url,
        LIVE_MEM_LLM_MODEL: 'scripted-model',
        LIVE_MEM_LLM_API_KEY: 'k',
      });
      const folder = await connect(server.url, token);
      const other = await connect(server.url, token);
      try {
        const progress: Array<{ progress: number; total?: number }> = [];
        const elsewhere: unknown[] = [];
        const consolidating = folder.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } }, undefined, {
          onprogress: (p) => progress.push(p),
        });
        // Same request ids, same token, at the same time: the other client's calls get none of it.
        const reads = Array.from({ length: 5 }, () =>
          other.callTool({ name: 'space_list', arguments: {} }, undefined, { onprogress: (p) => elsewhere.push(p) }),
        );
        const result = await consolidating;
        await Promise.all(reads);
        assert.equal((result.structuredContent as { status: string }).status, 'ok');
        assert.ok(progress.length >= 3, `${progress.length} progress notifications`);
        assert.equal(progress.at(-1)?.progress, 15);
        assert.deepEqual(elsewhere, []);
      } finally {
        await Promise.all([folder, other].map((client) => client.close()));
      }
    } finally {
      await server?.stop();
      await llm.close();
      await home.remove();
    }
  });
});

/** One HTTP/1.1 exchange on an open socket: the request written, the answer read up to the end of its chunked body. */
function exchange(socket: Socket, request: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!seen.endsWith('\r\n0\r\n\r\n')) return;
      done();
      const [head = '', ...body] = seen.split('\r\n\r\n');
      resolve({ head, body: body.join('\r\n\r\n') });
    };
    const onClose = () => {
      done();
      reject(new Error(`the server closed the connection; it had sent ${JSON.stringify(seen)}`));
    };
    const done = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(request);
  });
}

describe('idle connections', () => {
  it('advertises its keep-alive timeout on every answer, event streams included, and keeps an idle connection open past it', async () => {
    const home = await tempDir();
    let server: HttpServer | undefined;
    const socket = new Socket();
    socket.on('error', () => undefined);
    try {
      const core = createCore({ storage: createFsDriver(home.dir) });
      const { token } = await core.auth.create(owner, { name: 'idle', permissions: 'read', space_ids: '*' });
      server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
      const { host, port } = new URL(server.origin);
      await new Promise<void>((resolve) => socket.connect(Number(port), '127.0.0.1', resolve));
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'system_whoami', arguments: {} } });
      const request = [
        'POST /mcp HTTP/1.1',
        `Host: ${host}`,
        `Authorization: Bearer ${token}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        'MCP-Protocol-Version: 2025-06-18',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n');

      const first = await exchange(socket, request);
      assert.match(first.head, /^HTTP\/1\.1 200 /);
      assert.match(first.head, /^content-type: text\/event-stream/im);
      // The SDK's event stream sets Connection itself, which used to leave the timeout unsaid.
      const advertised = /^keep-alive: timeout=(\d+)\r?$/im.exec(first.head)?.[1];
      assert.ok(advertised, `no Keep-Alive timeout in ${first.head}`);
      // A client may send on the connection until the advertised time: one second past it, the socket is still open.
      await new Promise((resolve) => setTimeout(resolve, Number(advertised) * 1000 + 1000));
      const second = await exchange(socket, request);
      assert.match(second.head, /^HTTP\/1\.1 200 /);
      assert.match(second.body, /"agent":"idle"/);
    } finally {
      socket.destroy();
      await server?.stop();
      await home.remove();
    }
  });
});
