/**
 * The same advice from both shells (one hint table, src/shared/hints.ts): the same store, the same
 * mistakes, made through the binary's MCP server (in this process) and through the CLI as a process. Spaces
 * are not created by notes here: where they are, MCP tells an agent to write its note
 * (test/e2e/first-note), while the CLI keeps telling a person `live-mem space create`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MODEL_FIX_REMOTE } from '../../src/core/model.js';
import { CLI_WORDING, EVERY_TOOL, mcpWording, PIN_SPACE_REMOTE } from '../../src/shared/hints.js';
import { normalised } from '../helpers/hints.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type HttpServer, startHttpServer, type TestServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

describe('MCP and the CLI advise alike', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: TestServer;
  const env = () => ({
    PATH: process.env.PATH ?? '',
    LIVE_MEM_HOME: home.dir,
    LIVE_MEM_AGENT: 'shell',
    LIVE_MEM_LOG_LEVEL: 'warn',
    LIVE_MEM_AUTO_CREATE_SPACES: 'off',
  });
  /** The CLI's JSON error (the MCP result's shape) for `args`. */
  const cli = async (args: string[]) => {
    const result = await execa(process.execPath, [BIN, ...args, '--json'], { env: env(), extendEnv: false, reject: false });
    assert.notEqual(result.exitCode, 0, result.stderr);
    return JSON.parse(result.stdout) as { status: string; message: string; hint?: string };
  };

  before(async () => {
    home = await tempDir();
    server = await inProcessServer(env());
    assert.equal((await server.call('space_create', { space_id: 'alpha' })).status, 'created');
  });
  after(async () => {
    await server?.close();
    await home?.remove();
  });

  it('a missing space: create it or check the name, with a tool over MCP and a command in the CLI', async () => {
    const mcp = await server.call('live_read', { space_id: 'ghost' });
    const shell = await cli(['read', 'ghost']);
    assert.equal(mcp.status, 'not_found');
    assert.equal(shell.status, 'not_found');
    assert.match(String(mcp.hint), /space_create \(space_id "ghost"\).*space_list/);
    assert.match(String(shell.hint), /`live-mem space create ghost`.*`live-mem space list`/);
    assert.equal(normalised(String(mcp.hint), mcpWording(EVERY_TOOL)), normalised(String(shell.hint), CLI_WORDING));
  });

  it('a mistyped space: the spaces near it (a typo, a project space named in part) and how to list them, in both shells', async () => {
    assert.equal((await server.call('space_create', { space_id: 'acme-webapp-kgtmie3wqx' })).status, 'created');
    for (const [typed, near] of [
      ['alpah', ['alpha']],
      ['webapp', ['acme-webapp-kgtmie3wqx']],
    ] as const) {
      const mcp = await server.call('live_read', { space_id: typed });
      const shell = await cli(['read', typed]);
      for (const answer of [mcp, shell]) {
        assert.equal(answer.status, 'not_found');
        assert.deepEqual((answer as { similar_spaces?: string[] }).similar_spaces, near);
        assert.doesNotMatch(String(answer.hint), /create/, String(answer.hint));
      }
      assert.equal(mcp.hint, `The space does not exist: did you mean '${near[0]}'? space_list lists the spaces.`);
      assert.equal(normalised(String(mcp.hint), mcpWording(EVERY_TOOL)), normalised(String(shell.hint), CLI_WORDING));
    }
  });

  it('a missing bank file: check the name', async () => {
    const mcp = await server.call('bank_read', { space_id: 'alpha', filename: 'nope.md' });
    const shell = await cli(['bank', 'read', 'alpha', 'nope.md']);
    assert.equal(mcp.status, 'not_found');
    assert.equal(normalised(String(mcp.hint), mcpWording(EVERY_TOOL)), normalised(String(shell.hint), CLI_WORDING));
  });

  it('a missing confirmation: confirm=true over MCP, --yes in the CLI, nothing deleted', async () => {
    const mcp = await server.call('space_delete', { space_id: 'alpha' });
    const shell = await cli(['space', 'delete', 'alpha']);
    assert.match(String(mcp.message), /: call again with confirm=true$/);
    assert.match(String(mcp.hint), /call again with confirm=true only if the user asked for it/);
    assert.match(shell.message, /: run again with --yes$/);
    assert.equal(normalised(String(mcp.message), mcpWording(EVERY_TOOL)), normalised(shell.message, CLI_WORDING));
    assert.equal((await server.call('space_info', { space_id: 'alpha' })).status, 'ok');
  });
});

describe('a team server advises its clients what whoever runs it can do', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let http: HttpServer | undefined;
  let client: Client | undefined;

  before(async () => {
    home = await tempDir();
    const env = { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir };
    for (const space of ['alpha', 'beta']) await execa(process.execPath, [BIN, 'space', 'create', space], { env, extendEnv: false });
    const created = await execa(process.execPath, [BIN, 'token', 'create', 'bob', '-p', 'read,write', '-s', 'alpha,beta', '--json'], { env, extendEnv: false });
    http = await startHttpServer({ LIVE_MEM_HOME: home.dir });
    client = new Client({ name: 'team-client', version: '0' });
    const headers = { authorization: `Bearer ${String(JSON.parse(created.stdout).token)}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }));
  });
  after(async () => {
    await client?.close();
    await http?.stop();
    await home?.remove();
  });

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await (client as Client).callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;

  it("no default space: a token limited to the project's space, from whoever runs the server; never a setup of this machine", async () => {
    const refused = await call('live_note', { content: 'x', category: 'todo' });
    assert.equal(refused.code, 'invalid_input');
    assert.equal(
      refused.hint,
      `Give project, your workspace's git remote (\`git remote get-url origin\` prints it), or space_id (space_list shows the spaces); or ${PIN_SPACE_REMOTE}.`,
    );
    assert.doesNotMatch(JSON.stringify(refused), /live-mem setup|LIVE_MEM_SPACE/);
  });

  it("no model: the server's, set where it runs (consolidation falls to the agent, system_health)", async () => {
    assert.equal((await call('live_note', { space_id: 'alpha', content: 'x', category: 'todo' })).status, 'created');
    // Without the server's model the agent writes the plan itself: a work package, never a fix for this machine.
    const work = await call('bank_consolidate', { space_id: 'alpha' });
    assert.equal(work.status, 'ok', JSON.stringify(work));
    assert.equal(typeof work.handle, 'string');
    assert.doesNotMatch(JSON.stringify(work), /live-mem setup|LIVE_MEM_LLM/);
    const health = await call('system_health');
    assert.equal((health.services as { llm: { fix: string } }).llm.fix, MODEL_FIX_REMOTE);
  });
});
