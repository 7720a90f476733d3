/**
 * A team server shows each caller its tools: `live-mem serve --http` as a process, the SDK's client
 * over real HTTP with a read, a write and an admin token. tools/list (and the instructions) name only
 * what the token may call, from the agent profile by default or the profile the client's URL asks
 * for (`?tools=`); a tool left out is still refused by permission when called; over stdio a token is
 * listed the same way.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller, type Permission } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { PEOPLE_ONLY, TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { type HttpServer, spawnServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const AGENT = TOOL_PROFILES.agent as string[];
const WRITES = ['live_note', 'bank_consolidate'];
const permissionOf = (name: string) => allTools.find((tool) => tool.name === name)?.permission;
const ADMIN_TOOLS = allTools.filter((tool) => tool.permission === 'admin').map((tool) => tool.name);
const WRITE_TOOLS = allTools.filter((tool) => tool.permission === 'write').map((tool) => tool.name);
/** Every tool but the corrections people make: what a client of a default server may ask for. */
const ALL = allTools.map((tool) => tool.name).filter((name) => !PEOPLE_ONLY.includes(name));

const TOKENS: Array<{ name: string; permissions: Permission[] }> = [
  { name: 'reader', permissions: ['read'] },
  { name: 'writer', permissions: ['read', 'write'] },
  { name: 'admin', permissions: ['read', 'write', 'admin'] },
];

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'http-tools-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string };

/** The names a client is listed, sorted. */
const namesOf = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

/** A raw POST of tools/list, to send a URL the SDK's client would not choose. */
function rawList(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
  });
}

describe('a team server lists each caller the tools its token may call', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer | undefined;
  const tokens: Record<string, string> = {};

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    for (const { name, permissions } of TOKENS)
      tokens[name] = (await core.auth.create(owner, { name, permissions: permissions.join(','), space_ids: name === 'admin' ? '*' : 'alpha' })).token;
    server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it('by default, the agent profile: a read token is listed no write tool, write and admin tokens the twelve', async () => {
    const expected: Record<string, string[]> = {
      reader: AGENT.filter((name) => !WRITES.includes(name)).sort(),
      writer: [...AGENT].sort(),
      admin: [...AGENT].sort(),
    };
    for (const { name } of TOKENS) {
      const client = await connect(server?.url as string, tokens[name] as string);
      try {
        assert.deepEqual(await namesOf(client), expected[name], name);
        const whoami = await call(client, 'system_whoami');
        assert.deepEqual([whoami.tools_profile, whoami.tools_count], ['agent', expected[name]?.length], name);
        // The instructions name no tool the caller is not listed.
        const instructions = client.getInstructions() ?? '';
        if (name === 'reader') assert.doesNotMatch(instructions, /live_note|bank_consolidate/);
        else assert.match(instructions, /live_note/);
      } finally {
        await client.close();
      }
    }
  });

  it('?tools=all in the URL: no admin tool for read and write tokens, no write tool for a read token; the admin gets all 37', async () => {
    for (const { name, permissions } of TOKENS) {
      const client = await connect(`${server?.url}?tools=all`, tokens[name] as string);
      try {
        const names = await namesOf(client);
        const mayCall = (tool: string) => {
          const needs = permissionOf(tool);
          return needs === 'public' || permissions.includes(needs as Permission);
        };
        assert.deepEqual(names, ALL.filter(mayCall).sort(), name);
        if (!permissions.includes('admin'))
          assert.deepEqual(
            names.filter((tool) => ADMIN_TOOLS.includes(tool)),
            [],
            `${name}: no admin tool`,
          );
        if (!permissions.includes('write'))
          assert.deepEqual(
            names.filter((tool) => WRITE_TOOLS.includes(tool)),
            [],
            `${name}: no write tool`,
          );
        assert.equal((await call(client, 'system_whoami')).tools_profile, 'all');
      } finally {
        await client.close();
      }
    }
    const admin = await connect(`${server?.url}?tools=all`, tokens.admin as string);
    try {
      assert.equal((await admin.listTools()).tools.length, 37);
    } finally {
      await admin.close();
    }
  });

  it('a tool left out of a listing is still refused by permission when called, and a granted one still answers', async () => {
    const reader = await connect(server?.url as string, tokens.reader as string);
    const writer = await connect(server?.url as string, tokens.writer as string);
    try {
      const note = await call(reader, 'live_note', { space_id: 'alpha', category: 'todo', content: 'a reader tries' });
      assert.equal(note.status, 'forbidden', JSON.stringify(note));
      assert.match(String(note.message), /lacks the 'write' permission/);
      const tokensList = await call(writer, 'admin_list_tokens');
      assert.equal(tokensList.status, 'forbidden', JSON.stringify(tokensList));
      // Served but not in the agent profile: callable by a token that may.
      assert.equal((await call(writer, 'space_info', { space_id: 'alpha' })).status, 'ok');
      assert.equal((await call(reader, 'live_read', { space_id: 'alpha' })).status, 'ok');
    } finally {
      await Promise.all([reader.close(), writer.close()]);
    }
  });

  it('?tools= with a name that is no tool: 400 naming it; a tool this server does not serve is left out', async () => {
    const refused = await rawList(`${server?.url}?tools=agent,no_such_tool`, tokens.admin as string);
    assert.equal(refused.status, 400, refused.body);
    assert.match(refused.body, /unknown tool in the URL's tools parameter \(\?tools=\): no_such_tool/);
    const client = await connect(`${server?.url}?tools=live_read,bank_write`, tokens.admin as string);
    try {
      assert.deepEqual(await namesOf(client), ['live_read']);
    } finally {
      await client.close();
    }
  });

  it('LIVE_MEM_TOOLS=admin on the server: every tool to an admin token by default, the corrections included; none of them to a writer', async () => {
    const admin = await startHttpServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_TOOLS: 'admin' });
    try {
      const full = await connect(admin.url, tokens.admin as string);
      const writer = await connect(admin.url, tokens.writer as string);
      try {
        assert.equal((await full.listTools()).tools.length, allTools.length);
        const names = await namesOf(writer);
        assert.deepEqual(
          names.filter((tool) => ADMIN_TOOLS.includes(tool)),
          [],
        );
        assert.ok(names.includes('live_note') && names.includes('space_create'), names.join(' '));
      } finally {
        await Promise.all([full.close(), writer.close()]);
      }
    } finally {
      await admin.stop();
    }
  });

  it('over stdio, a read token is listed no write tool either', async () => {
    const stdio = await spawnServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_AUTH: 'required', LIVE_MEM_TOKEN: tokens.reader as string, LIVE_MEM_TOOLS: 'agent' });
    try {
      assert.deepEqual((await stdio.client.listTools()).tools.map((tool) => tool.name).sort(), AGENT.filter((name) => !WRITES.includes(name)).sort());
      assert.equal((await stdio.call('live_note', { space_id: 'alpha', category: 'todo', content: 'x' })).status, 'forbidden');
    } finally {
      await stdio.close();
    }
  });
});
