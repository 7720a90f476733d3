/**
 * What `/mcp` answers clients beyond a well-behaved SDK one, on `live-mem serve --http` as a process:
 * a 401 that says where the resource metadata is (RFC 9728) and that metadata, public; a client that
 * accepts only JSON is answered in JSON (not 406); the errors the SDK raises itself (an unknown
 * prompt or resource) carry MCP's "MCP error <code>:" once, over HTTP and over stdio.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { type HttpServer, spawnServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

/** Whether an error is the SDK client's for `code`, with its "MCP error <code>: " prefix said once. */
const saidOnce = (code: number, message: string) => (error: unknown) => error instanceof Error && error.message === `MCP error ${code}: ${message}`;

describe('HTTP clients', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer;
  let token = '';

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    token = (await core.auth.create(owner, { name: 'agent', permissions: 'read,write', space_ids: 'alpha' })).token;
    server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it('a request without a token gets 401 with the resource metadata URL, and that document is public', async () => {
    const denied = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: TOOLS_LIST,
    });
    assert.equal(denied.status, 401);
    const metadataUrl = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
    assert.equal(denied.headers.get('www-authenticate'), `Bearer realm="live-mem", resource_metadata="${metadataUrl}"`);

    const metadata = await fetch(metadataUrl);
    assert.equal(metadata.status, 200);
    assert.match(metadata.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await metadata.json()) as Record<string, unknown>;
    assert.equal(body.resource, server.url, 'RFC 9728: the resource is the URL the client called');
    assert.deepEqual(body.bearer_methods_supported, ['header']);
    assert.match(String(body.resource_documentation), /^https:\/\/github\.com\/chrlesur\/live-mem\/blob\/main\/docs\/security\.md#tokens-over-http$/);
    assert.equal(body.authorization_servers, undefined, 'no OAuth server issues live-mem tokens: none is named');
  });

  it('behind a trusted proxy, the metadata names the address clients use', async () => {
    const proxied = await startHttpServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_TRUST_PROXY: 'true', LIVE_MEM_ALLOWED_HOSTS: 'memory.example.com' });
    try {
      const forwarded = { 'x-forwarded-host': 'memory.example.com', 'x-forwarded-proto': 'https' };
      const denied = await fetch(proxied.url, { method: 'POST', headers: { 'content-type': 'application/json', ...forwarded }, body: TOOLS_LIST });
      assert.equal(denied.status, 401);
      assert.match(
        String(denied.headers.get('www-authenticate')),
        /resource_metadata="https:\/\/memory\.example\.com\/\.well-known\/oauth-protected-resource\/mcp"$/,
      );
      const metadata = (await (await fetch(`${proxied.origin}/.well-known/oauth-protected-resource/mcp`, { headers: forwarded })).json()) as {
        resource: string;
      };
      assert.equal(metadata.resource, 'https://memory.example.com/mcp');
    } finally {
      await proxied.stop();
    }
  });

  it('a client that accepts only JSON is answered in JSON; one that accepts both keeps its event stream', async () => {
    const post = (accept: string) =>
      fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${token}` }, body: TOOLS_LIST });
    const json = await post('application/json');
    assert.equal(json.status, 200, await json.clone().text());
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
    const answer = (await json.json()) as { id: number; result: { tools: Array<{ name: string }> } };
    assert.equal(answer.id, 1);
    assert.ok(answer.result.tools.some((tool) => tool.name === 'live_note'));

    const both = await post('application/json, text/event-stream');
    assert.equal(both.status, 200);
    assert.match(both.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(await both.text(), /"live_note"/);

    assert.equal((await post('text/html')).status, 406, 'a client that takes neither is still refused');
  });

  it('an unknown prompt or resource: the SDK client reads "MCP error <code>:" once, over HTTP', async () => {
    const client = new Client({ name: 'http-clients', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      await assert.rejects(client.getPrompt({ name: 'nope' }), saidOnce(-32602, 'Prompt nope not found'));
      await assert.rejects(client.readResource({ uri: 'live-mem://nope' }), saidOnce(-32602, 'Resource live-mem://nope not found'));
    } finally {
      await client.close();
    }
  });

  it('and over stdio', async () => {
    const stdio = await spawnServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });
    try {
      await assert.rejects(stdio.client.getPrompt({ name: 'nope' }), saidOnce(-32602, 'Prompt nope not found'));
      await assert.rejects(stdio.client.readResource({ uri: 'live-mem://nope' }), saidOnce(-32602, 'Resource live-mem://nope not found'));
      // Errors live-mem raises itself were already said once (protocolError): still so.
      await assert.rejects(stdio.client.readResource({ uri: 'live-mem://alpha/bank/none.md' }), (error: unknown) =>
        (error as Error).message.startsWith("MCP error -32002: bank file 'none.md' does not exist"),
      );
    } finally {
      await stdio.close();
    }
  });
});
