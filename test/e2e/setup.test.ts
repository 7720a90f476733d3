/**
 * `live-mem setup <client>` as a process, against a fake home and project for each client: the
 * configuration file created, or merged with the servers already there after a backup; a second run
 * that changes nothing and says so; --print that writes nothing; --rules writing its block once; a
 * malformed file refused with nothing written. And the written entry launches a working server.
 */
import assert from 'node:assert/strict';
import { lstat, mkdir, readdir, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { RULES_START } from '../../src/cli/commands/setup.js';
import { SERVER_INSTRUCTIONS, serverInstructions } from '../../src/mcp/server.js';
import { BIN } from '../helpers/mcp-client.js';
import { setupNode } from '../helpers/node.js';
import { tempDir } from '../helpers/tmp.js';

const CLIENTS = [
  { client: 'claude-code', config: '.claude.json', rules: 'CLAUDE.md' },
  { client: 'claude-desktop', config: '.config/Claude/claude_desktop_config.json', rules: undefined },
  { client: 'cursor', config: '.cursor/mcp.json', rules: '.cursor/rules/live-mem.mdc' },
  { client: 'cline', config: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json', rules: '.clinerules' },
] as const;

/** Every file under a folder, relative: what a command wrote, or that it wrote nothing. */
async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('live-mem setup <client> on a fake home', () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let bin: string;
  before(async () => {
    root = await tempDir('live-mem-setup');
    bin = await realpath(BIN);
  });
  after(async () => root?.remove());

  /** A fresh home and project, and a runner of the CLI in that project with that home. */
  async function fresh(label: string) {
    const home = path.join(root.dir, label, 'home');
    const project = path.join(root.dir, label, 'project');
    await mkdir(home, { recursive: true });
    await mkdir(project, { recursive: true });
    const run = (args: string[]) =>
      execa(process.execPath, [BIN, ...args], {
        cwd: project,
        env: { PATH: process.env.PATH ?? '', HOME: home },
        extendEnv: false,
        reject: false,
        stripFinalNewline: false,
      });
    return { home, project, run };
  }

  for (const { client, config, rules } of CLIENTS) {
    it(`${client}: creates the file, then a second run changes nothing and says so`, async () => {
      const { home, project, run } = await fresh(`${client}-new`);
      const first = await run(['setup', client]);
      assert.equal(first.exitCode, 0, first.stderr);
      assert.match(first.stdout, /: created\n/);
      assert.match(first.stdout, /\(this installation\)/);
      const written = JSON.parse(await readFile(path.join(home, config), 'utf8'));
      // The agent profile by default (README's advice), not `all`'s 37 tools.
      assert.deepEqual(written, {
        mcpServers: { 'live-mem': { command: setupNode(home), args: [bin], env: { LIVE_MEM_AGENT: client, LIVE_MEM_TOOLS: 'agent' } } },
      });

      const second = await run(['setup', client]);
      assert.equal(second.exitCode, 0, second.stderr);
      assert.match(second.stdout, /: unchanged\nalready set up: nothing changed\n$/);
      assert.deepEqual(await filesUnder(home), [config], 'no backup: nothing changed');
      assert.deepEqual(await filesUnder(project), []);
    });

    it(`${client}: merges into an existing file after a backup, keeping the other servers; --npx of an unpublished version writes nothing`, async () => {
      const { home, run } = await fresh(`${client}-merge`);
      const file = path.join(home, config);
      await mkdir(path.dirname(file), { recursive: true });
      // An entry written by an older live-mem: npx of a package the registry does not hold.
      const outdated = { command: 'npx', args: ['-y', 'live-mem'], env: { LIVE_MEM_AGENT: 'old' }, autoApprove: ['live_note'] };
      const old = `${JSON.stringify({ mcpServers: { github: { command: 'gh-mcp', args: ['--x'] }, 'live-mem': outdated }, other: true }, null, 4)}\n`;
      await writeFile(file, old);

      const refused = await run(['--agent', 'reviewer', 'setup', client, '--npx']);
      assert.equal(refused.exitCode, 2, refused.stderr);
      assert.match(refused.stderr, /--npx: live-mem \d+\.\d+\.\d+\S* is not on the npm registry.*leave out --npx, and the entry launches this installation/);
      assert.equal(await readFile(file, 'utf8'), old, 'nothing written');
      assert.deepEqual(await filesUnder(path.dirname(file)), [path.basename(file)], 'no backup either');

      const result = await run(['--agent', 'reviewer', 'setup', client]);
      assert.equal(result.exitCode, 0, result.stderr);
      assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), {
        mcpServers: {
          github: { command: 'gh-mcp', args: ['--x'] },
          'live-mem': { command: setupNode(home), args: [bin], env: { LIVE_MEM_AGENT: 'reviewer', LIVE_MEM_TOOLS: 'agent' }, autoApprove: ['live_note'] },
        },
        other: true,
      });
      const backups = (await readdir(path.dirname(file))).filter((name) => name.startsWith(`${path.basename(file)}.bak-`));
      assert.equal(backups.length, 1, 'one backup');
      assert.equal(await readFile(path.join(path.dirname(file), backups[0] as string), 'utf8'), old, 'the backup is the old file');
      assert.match(result.stdout, new RegExp(`updated \\(backup: .*${backups[0]?.replace(/\./g, '\\.')}\\)`));
    });

    it(`${client}: --print shows the entry and writes nothing`, async () => {
      const { home, project, run } = await fresh(`${client}-print`);
      const result = await run(['setup', client, '--print', ...(rules ? ['--rules'] : [])]);
      assert.equal(result.exitCode, 0, result.stderr);
      assert.match(result.stdout, /not written \(--print\)/);
      assert.ok(result.stdout.includes(`"command": ${JSON.stringify(setupNode(home))}`), result.stdout);
      if (rules) assert.ok(result.stdout.includes(RULES_START));
      // The last line says what to do with what is shown, whole: into which file (or files, each named above its block).
      const last = result.stdout.trimEnd().split('\n').at(-1);
      assert.equal(
        last,
        rules
          ? 'nothing written (--print): merge each block into the file named above it, keeping what is there'
          : `nothing written (--print): merge it into ${path.join(home, config)}, keeping what is there`,
      );
      assert.deepEqual(await filesUnder(home), []);
      assert.deepEqual(await filesUnder(project), []);
    });

    it(`${client}: a malformed configuration is refused, exit 2, nothing written`, async () => {
      const { home, run } = await fresh(`${client}-bad`);
      const file = path.join(home, config);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, '{ "mcpServers": { "github": ');
      const result = await run(['setup', client]);
      assert.equal(result.exitCode, 2);
      assert.match(result.stderr, /^live-mem: .*is not valid JSON .*nothing was written\n$/);
      assert.equal(result.stdout, '');
      assert.equal(await readFile(file, 'utf8'), '{ "mcpServers": { "github": ');
      assert.deepEqual(await filesUnder(home), [config], 'no backup');
    });

    if (rules) {
      it(`${client}: --rules writes the workflow block into ${rules} once`, async () => {
        const { project, run } = await fresh(`${client}-rules`);
        const file = path.join(project, rules);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, '# House rules\nBe brief.\n');
        assert.equal((await run(['setup', client, '--rules'])).exitCode, 0);
        const second = await run(['setup', client, '--rules']);
        assert.equal(second.exitCode, 0, second.stderr);
        assert.match(second.stdout, /already set up/);
        const text = await readFile(file, 'utf8');
        assert.ok(text.startsWith('# House rules\nBe brief.\n\n<!-- live-mem:start -->\n'), text);
        assert.equal(text.split(RULES_START).length, 2, 'one block');
        // Cline starts the server in / with no roots: its agent is told to name the project on each call.
        const workflow = client === 'cline' ? serverInstructions(undefined, 'project') : SERVER_INSTRUCTIONS;
        assert.ok(text.includes(workflow), 'the server instructions, word for word (the agent profile serves every tool they name)');
        assert.equal(text.includes('Give project on every call'), client === 'cline');
      });
    }
  }

  it('a configuration kept as a link (dotfiles) is written where it points, its mode kept; the link stays', async () => {
    const { home, run } = await fresh('link');
    const target = path.join(home, 'dotfiles', 'claude.json');
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, '{"mcpServers": {}}\n', { mode: 0o600 });
    await symlink(target, path.join(home, '.claude.json'));
    const result = await run(['setup', 'claude-code']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok((await lstat(path.join(home, '.claude.json'))).isSymbolicLink());
    assert.equal((await stat(target)).mode & 0o777, 0o600);
    assert.equal(JSON.parse(await readFile(target, 'utf8')).mcpServers['live-mem'].env.LIVE_MEM_AGENT, 'claude-code');
    assert.equal((await readdir(path.dirname(target))).filter((name) => name.startsWith('claude.json.bak-')).length, 1, 'the backup beside the real file');
  });

  it('--rules with --tools: the workflow of the tools configured, naming none it lacks', async () => {
    const { project, run } = await fresh('rules-tools');
    const result = await run(['--tools', 'live_note,memory_search', 'setup', 'claude-code', '--rules']);
    assert.equal(result.exitCode, 0, result.stderr);
    const text = await readFile(path.join(project, 'CLAUDE.md'), 'utf8');
    assert.match(text, /live_note/);
    assert.match(text, /memory_search/);
    for (const tool of ['memory_context', 'space_summary', 'live_read', 'space_list', 'bank_consolidate'])
      assert.ok(!text.includes(tool), `${tool} is not served`);
  });

  it('claude-desktop: --rules is refused (no project rules file), nothing written', async () => {
    const { home, project, run } = await fresh('desktop-rules');
    const result = await run(['setup', 'claude-desktop', '--rules']);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /^live-mem: claude-desktop has no project rules file/);
    assert.deepEqual([...(await filesUnder(home)), ...(await filesUnder(project))], []);
  });

  it('--scope project writes the project file; an unknown client is refused', async () => {
    const { home, project, run } = await fresh('scope');
    assert.equal((await run(['setup', 'cursor', '--scope', 'project'])).exitCode, 0);
    assert.equal((await run(['setup', 'claude-code', '--scope', 'project'])).exitCode, 0);
    assert.deepEqual(await filesUnder(project), ['.cursor/mcp.json', '.mcp.json']);
    assert.deepEqual(await filesUnder(home), []);
    const unknown = await run(['setup', 'vim']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /^live-mem: unknown client 'vim': one of claude-code, claude-desktop, cursor, cline\n$/);
  });

  it('the entry written launches a server that answers tools/list, as the agent it names', async () => {
    const { home, run } = await fresh('launch');
    assert.equal((await run(['--home', path.join(home, 'store'), 'setup', 'claude-desktop'])).exitCode, 0);
    const entry = JSON.parse(await readFile(path.join(home, CLIENTS[1].config), 'utf8')).mcpServers['live-mem'];
    assert.equal(entry.env.LIVE_MEM_HOME, path.join(home, 'store'));
    const client = new Client({ name: 'setup-test', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env: { HOME: home, ...entry.env }, stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'live_note'));
      const whoami = await client.callTool({ name: 'system_whoami', arguments: {} });
      assert.equal((whoami.structuredContent as { agent: string }).agent, 'claude-desktop');
    } finally {
      await client.close();
    }
  });
});
