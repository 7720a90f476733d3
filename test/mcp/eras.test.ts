/**
 * Both protocol eras from one build: MCP 2026-07-28 (the SDK v2 client negotiating it with
 * `versionNegotiation: { mode: 'auto' }`) and 2025-11-25 (the v1 client, as every client before the
 * move), each over stdio (the built binary) and over Streamable HTTP (`live-mem serve --http`). Each
 * gets the whole tool surface, a note written and read back, a search, a bank read, a resource, a
 * prompt; the modern one also `server/discover`, a deterministic tools/list and -32602 for a missing
 * resource (-32002 stays the 2025 answer); and through `live-mem connect`, the relay. In process, the SDK's HTTP entry is driven through its
 * fetch function, as the SDK's own guide tests it.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { selectTools } from '../../src/mcp/profiles.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN, type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const MODERN = '2026-07-28';
/** What a stdio server serves by default, and lists to its owner: the `all` profile. */
const ALL = selectTools('all').tools.map((tool) => tool.name);

/** What both clients share of their API (the v1 and v2 Client differ in types, not in these calls). */
interface AnyClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<{ contents: Array<{ uri: string; text?: string }> }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: unknown[] }>;
  close(): Promise<void>;
}

/** A tool's structuredContent, its status checked. */
async function call(client: AnyClient, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as { structuredContent?: Record<string, unknown>; isError?: boolean };
  assert.ok(result.structuredContent, `${name}: no structuredContent`);
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

/** The surface every era answers: tools, a note written then read, a search, a bank read, a resource, a prompt. */
async function surface(client: AnyClient, expected: readonly string[], tag: string): Promise<void> {
  const first = await client.listTools();
  assert.deepEqual(first.tools.map((tool) => tool.name).sort(), [...expected].sort());
  assert.equal(JSON.stringify(await client.listTools()), JSON.stringify(first), 'tools/list: the same answer twice');
  const content = `era check ${tag}: the kiwi decision`;
  assert.ok(['ok', 'created'].includes(String((await call(client, 'live_note', { space_id: 'alpha', category: 'decision', content })).status)));
  const read = await call(client, 'live_read', { space_id: 'alpha' });
  assert.match(JSON.stringify(read), new RegExp(`era check ${tag}`));
  const found = await call(client, 'memory_search', { space_id: 'alpha', query: 'kiwi decision' });
  assert.equal(found.status, 'ok');
  const bank = await call(client, 'bank_list', { space_id: 'alpha' });
  assert.equal(bank.status, 'ok');
  const rules = await client.readResource({ uri: 'live-mem://alpha/rules' });
  assert.match(rules.contents[0]?.text ?? '', /activeContext\.md/);
  const prompt = await client.getPrompt({ name: 'memory_start', arguments: { space: 'alpha' } });
  assert.ok(prompt.messages.length > 0);
}

/** The code of the error a missing bank file is answered with. */
async function missingCode(client: AnyClient): Promise<number> {
  const refusal = await client.readResource({ uri: 'live-mem://alpha/bank/none.md' }).then(
    () => assert.fail('a missing bank file was read'),
    (error: unknown) => error as { code?: number },
  );
  return Number(refusal.code);
}

const modernClient = () => new Client({ name: 'eras-modern', version: '0' }, { versionNegotiation: { mode: 'auto' } });
const legacyClient = () => new ClientV1({ name: 'eras-legacy', version: '0' });

describe('both protocol eras from one build', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let http: HttpServer;
  let token = '';
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: home.dir, LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    token = (await core.auth.create(owner, { name: 'agent', permissions: 'read,write', space_ids: 'alpha' })).token;
    http = await startHttpServer({ LIVE_MEM_HOME: home.dir });
  });
  after(async () => {
    await http?.stop();
    await home?.remove();
  });

  it('stdio, 2026-07-28: the v2 client negotiates the modern era and gets the whole surface, server/discover and -32602', async () => {
    const client = modernClient();
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env: env(), stderr: 'ignore' }));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const discovered = client.getDiscoverResult();
      assert.ok(discovered?.supportedVersions.includes(MODERN), JSON.stringify(discovered));
      assert.match(discovered?.instructions ?? '', /live_note/, 'server/discover carries the instructions');
      assert.doesNotMatch(discovered?.instructions ?? '', /roots/, 'no roots in this era: the project argument names the space');
      await surface(client, ALL, 'stdio modern');
      assert.equal(await missingCode(client), -32602);
    } finally {
      await client.close();
    }
  });

  it('stdio, 2025-11-25: the v1 client is served as before the move', async () => {
    const client = legacyClient();
    await client.connect(new StdioClientTransportV1({ command: process.execPath, args: [BIN], env: env(), stderr: 'ignore' }));
    try {
      assert.match(client.getInstructions() ?? '', /live_note/);
      await surface(client, ALL, 'stdio legacy');
      assert.equal(await missingCode(client), -32002);
    } finally {
      await client.close();
    }
  });

  it('HTTP: both clients on one endpoint and one token, the same tools listed, each era its own not-found code', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const modern = modernClient();
    const legacy = legacyClient();
    await modern.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }));
    await legacy.connect(new StreamableHTTPClientTransportV1(new URL(http.url), { requestInit: { headers } }));
    try {
      assert.equal(modern.getProtocolEra(), 'modern');
      const discovered = modern.getDiscoverResult();
      assert.ok(discovered?.supportedVersions.includes(MODERN));
      assert.equal(discovered?.instructions, legacy.getInstructions(), 'the instructions of one token, whichever era asks');
      const listed = (await legacy.listTools()).tools.map((tool) => tool.name);
      assert.ok(listed.includes('live_note') && !listed.includes('admin_create_token'), listed.join(', '));
      await surface(modern, listed, 'http modern');
      await surface(legacy, listed, 'http legacy');
      assert.equal(await missingCode(modern), -32602);
      assert.equal(await missingCode(legacy), -32002);
      // The note each era wrote is one memory: each reads the other's.
      const notes = JSON.stringify(await call(legacy, 'live_read', { space_id: 'alpha' }));
      assert.match(notes, /era check http modern/);
    } finally {
      await modern.close();
      await legacy.close();
    }
  });

  it('through `live-mem connect` (stdio relayed to HTTP), the v2 client still reaches the modern era', async () => {
    const tokenFile = `${home.dir}/token`;
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const client = modernClient();
    const args = [BIN, '--token-file', tokenFile, 'connect', http.url];
    await client.connect(new StdioClientTransport({ command: process.execPath, args, env: env(), stderr: 'ignore' }));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      await call(client, 'live_note', { space_id: 'alpha', category: 'progress', content: 'relayed in the modern era' });
      assert.match(JSON.stringify(await call(client, 'live_read', { space_id: 'alpha' })), /relayed in the modern era/);
      assert.equal(await missingCode(client), -32602);
    } finally {
      await client.close();
    }
  });
  it('HTTP, 2026-07-28: a client lending its model consolidates on it, through input_required rounds', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const prompts: string[] = [];
    const client = new Client({ name: 'eras-lending', version: '0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('sampling/createMessage', async (request) => {
      const first = request.params.messages[0]?.content;
      const prompt = first && 'text' in first ? String(first.text) : '';
      prompts.push(prompt);
      return { model: 'client-model', role: 'assistant', content: { type: 'text', text: writePlan({ prompt }) } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }));
    try {
      await call(client, 'live_note', { space_id: 'alpha', category: 'decision', content: 'era check: the lent model folds this in' });
      const result = await call(client, 'bank_consolidate', { space_id: 'alpha' });
      assert.equal(result.status, 'ok', JSON.stringify(result));
      assert.equal(result.notes_remaining, 0);
      assert.equal(prompts.length, Number(result.windows));
      assert.match(JSON.stringify(await call(client, 'bank_read', { space_id: 'alpha', filename: 'activeContext.md' })), /the lent model folds this in/);
    } finally {
      await client.close();
    }
  });
});

describe('the 2026-07-28 era in process (createMcpHandler driven through its fetch function)', () => {
  it('answers discover, tools/list with cache fields, an unknown tool with -32602', async () => {
    const home = await tempDir();
    try {
      const core = createCore({ storage: createFsDriver(home.dir) });
      await core.spaces.create(owner, { space_id: 'alpha' });
      const options = { core, version: '0.0.0-test', logger: core.context.logger, resolveCaller: () => owner };
      const handler = createMcpHandler(() => createMcpServer({ ...options, era: 'modern' }), { legacy: 'reject' });
      const client = modernClient();
      await client.connect(
        new StreamableHTTPClientTransport(new URL('http://test.local/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }),
      );
      try {
        assert.equal(client.getProtocolEra(), 'modern');
        const raw = await handler.fetch(
          new Request('http://test.local/mcp', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': MODERN,
              'mcp-method': 'tools/list',
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/list',
              params: {
                _meta: {
                  'io.modelcontextprotocol/protocolVersion': MODERN,
                  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
                  'io.modelcontextprotocol/clientCapabilities': {},
                },
              },
            }),
          }),
        );
        const answer = (await raw.json()) as { result: { resultType?: string; ttlMs?: number; cacheScope?: string; tools: unknown[] } };
        assert.equal(answer.result.resultType, 'complete');
        assert.equal(answer.result.cacheScope, 'private', 'tools/list is fitted to the caller');
        assert.ok((answer.result.ttlMs ?? 0) > 0);
        assert.equal(answer.result.tools.length, ALL.length);
        await assert.rejects(
          client.callTool({ name: 'no_such_tool', arguments: {} }),
          (error: unknown) => error instanceof ProtocolError && error.code === -32602,
        );
        const resource = await client.readResource({ uri: 'live-mem://alpha/rules' });
        assert.match(JSON.stringify(resource), /activeContext/);
      } finally {
        await client.close();
        await handler.close();
      }
    } finally {
      await home.remove();
    }
  });
});
