/**
 * The same advice from both shells (one hint table, src/shared/hints.ts): the same store, the same
 * mistakes, made through the binary's MCP server (in this process) and through the CLI as a process. Spaces
 * are not created by notes here: where they are, MCP tells an agent to write its note
 * (test/e2e/first-note), while the CLI keeps telling a person `live-mem space create`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI_WORDING, EVERY_TOOL, mcpWording } from '../../src/shared/hints.js';
import { normalised } from '../helpers/hints.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type TestServer } from '../helpers/mcp-client.js';
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
