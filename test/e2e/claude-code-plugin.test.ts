/**
 * The Claude Code plugin (clients/claude-code, listed by the marketplace in .claude-plugin/): its
 * manifest and the marketplace have the documented shape (fixtures/schemas/), its hook is the one
 * `setup claude-code --hooks` writes but for the command on the PATH, and what it declares runs as
 * Claude Code runs it: the MCP server launched by the SDK's client in a clone of a project, declaring
 * the project as its root, with `live-mem` on the PATH as `npm install -g` puts it there; the
 * SessionStart hook run by sh in that folder, printing what the server wrote.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { DEFAULT_TOOLS } from '../../src/cli/commands/setup.js';
import { HOOK_MATCHER, HOOK_TIMEOUT_S } from '../../src/cli/commands/setup-hooks.js';
import { projectIdentity } from '../../src/config/project-identity.js';
import { TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { schemaValidator } from '../helpers/json-schema.js';
import { ROOT } from '../helpers/package.js';
import { tempDir } from '../helpers/tmp.js';

const PLUGIN = path.join(ROOT, 'clients', 'claude-code');
const json = async (file: string) => JSON.parse(await readFile(file, 'utf8'));

interface StdioServer {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}
interface Manifest {
  name: string;
  version: string;
  mcpServers: Record<string, StdioServer>;
  hooks: { SessionStart: Array<{ matcher: string; hooks: Array<{ type: string; command: string; timeout: number }> }> };
}

/** `${CLAUDE_PLUGIN_ROOT}` in a declared string, as Claude Code expands it. */
const expand = (value: string) => value.replaceAll(`\${CLAUDE_PLUGIN_ROOT}`, PLUGIN);

describe('the Claude Code plugin', () => {
  let manifest: Manifest;
  before(async () => {
    manifest = await json(path.join(PLUGIN, '.claude-plugin', 'plugin.json'));
  });

  it('its manifest, and the marketplace that lists it, have the documented shape and the version package.json says', async () => {
    assert.deepEqual(schemaValidator(await json(path.join(ROOT, 'fixtures', 'schemas', 'claude-code-plugin.schema.json')))(manifest), []);
    const marketplace = await json(path.join(ROOT, '.claude-plugin', 'marketplace.json'));
    assert.deepEqual(schemaValidator(await json(path.join(ROOT, 'fixtures', 'schemas', 'claude-code-marketplace.schema.json')))(marketplace), []);
    const [listed] = marketplace.plugins as Array<{ name: string; source: string; version: string }>;
    assert.equal(path.resolve(ROOT, listed?.source ?? ''), PLUGIN, "the marketplace's source is the plugin's folder");
    const { version } = await json(path.join(ROOT, 'package.json'));
    assert.deepEqual([listed?.name, listed?.version, manifest.version], [manifest.name, version, version]);
  });

  it('the documented shape refuses what Claude Code refuses: a path out of the plugin, a hook event that does not exist, a name with spaces', async () => {
    const validate = schemaValidator(await json(path.join(ROOT, 'fixtures', 'schemas', 'claude-code-plugin.schema.json')));
    assert.notDeepEqual(validate({ ...manifest, mcpServers: '../elsewhere/.mcp.json' }), []);
    assert.notDeepEqual(validate({ ...manifest, hooks: { OnStart: manifest.hooks.SessionStart } }), []);
    assert.notDeepEqual(validate({ ...manifest, name: 'Live Mem' }), []);
  });

  it('declares the server and hook `setup claude-code --hooks` writes, with the command on the PATH', () => {
    assert.deepEqual(Object.keys(manifest.mcpServers), ['live-mem']);
    assert.deepEqual(manifest.mcpServers['live-mem'], { command: 'live-mem', env: { LIVE_MEM_AGENT: 'claude-code', LIVE_MEM_TOOLS: DEFAULT_TOOLS } });
    assert.deepEqual(manifest.hooks.SessionStart, [
      { matcher: HOOK_MATCHER, hooks: [{ type: 'command', command: 'live-mem context . --hook', timeout: HOOK_TIMEOUT_S }] },
    ]);
  });

  describe('run as Claude Code runs it, in a clone of a project', () => {
    let scratch: Awaited<ReturnType<typeof tempDir>>;
    let project: string;
    let env: Record<string, string>;

    before(async () => {
      scratch = await tempDir('live-mem-plugin');
      // `npm install -g` links the package's bin under this name in a folder on the PATH.
      const bin = path.join(scratch.dir, 'global', 'bin');
      await mkdir(bin, { recursive: true });
      await symlink(path.join(ROOT, 'bin', 'live-mem.cjs'), path.join(bin, 'live-mem'));
      const home = path.join(scratch.dir, 'home');
      await mkdir(home);
      env = { PATH: [bin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter), HOME: home };
      project = path.join(scratch.dir, 'src', 'webapp');
      await mkdir(project, { recursive: true });
      for (const args of [
        ['init', '-q'],
        ['remote', 'add', 'origin', 'git@github.com:acme/webapp.git'],
      ]) {
        const git = spawnSync('git', args, {
          cwd: project,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
        });
        assert.equal(git.status, 0, git.stderr);
      }
    });
    after(() => scratch?.remove());

    it("the MCP server serves the agent tools and writes to the project's space; the SessionStart hook then prints that note", async () => {
      const declared = manifest.mcpServers['live-mem'] as StdioServer;
      const client = new Client({ name: 'claude-code', version: '2.0.0' }, { capabilities: { roots: { listChanged: true } } });
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(project).href, name: 'webapp' }] }));
      await client.connect(
        new StdioClientTransport({
          command: expand(declared.command),
          args: (declared.args ?? []).map(expand),
          env: { ...env, ...declared.env },
          cwd: project,
          stderr: 'ignore',
        }),
      );
      const identity = projectIdentity(project, undefined);
      assert.ok('space_id' in identity, JSON.stringify(identity));
      try {
        assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), [...(TOOL_PROFILES.agent as string[])].sort());
        const note = (await client.callTool({ name: 'live_note', arguments: { content: 'Postgres for the job queue', category: 'decision' } }))
          .structuredContent as Record<string, unknown>;
        assert.equal(note.status, 'created', JSON.stringify(note));
        assert.equal(note.space_id, identity.space_id, "the project's space");
      } finally {
        await client.close();
      }
      assert.ok((await stat(path.join(env.HOME as string, '.live-mem', identity.space_id))).isDirectory(), 'in the default store');

      const [hook] = manifest.hooks.SessionStart[0]?.hooks ?? [];
      const started = await execa('sh', ['-c', expand(hook?.command ?? '')], { cwd: project, env, extendEnv: false, reject: false });
      assert.equal(started.exitCode, 0, started.stderr);
      assert.match(started.stdout, /Postgres for the job queue/);
      assert.match(started.stdout, /"claude-code"/, "signed by the plugin's agent name");
    });
  });
});
