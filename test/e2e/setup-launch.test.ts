/**
 * Every entry `live-mem setup` writes starts: for each client, each form (stdio, a pinned space,
 * another profile, a project file, HTTP with the token or a reference to it, HTTP asking for another
 * profile), the entry is read back from the file setup wrote and launched by the SDK's client exactly
 * as that client launches it — its command, args and env as written, in the folder that client starts
 * servers in (`/` for Claude Desktop and Cline, which declare no roots; Cline passes only PATH and the
 * entry's env, to which the SDK's stdio transport adds its default variables; the project for Claude
 * Code and Cursor, and $HOME for the Claude Code desktop app) — and must initialise and list its tools.
 * Claude Code's SessionStart hook runs too.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { BIN, type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const USER_FILE = {
  'claude-code': '.claude.json',
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  cursor: '.cursor/mcp.json',
  cline: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
} as const;
const PROJECT_FILE: Partial<Record<ClientName, string>> = { 'claude-code': '.mcp.json', cursor: '.cursor/mcp.json' };
type ClientName = keyof typeof USER_FILE;
const CLIENTS = Object.keys(USER_FILE) as ClientName[];

type Entry = { command?: string; args?: string[]; env?: Record<string, string>; type?: string; url?: string; headers?: Record<string, string> };

/** Where each client starts a stdio server: Claude Desktop and Cline in `/` (cline/cline#9950), the others in the project. */
const CWD: Record<ClientName, 'root' | 'project'> = { 'claude-code': 'project', 'claude-desktop': 'root', cursor: 'project', cline: 'root' };

/** The tools of a profile a caller with `permissions` is listed (mcp/profiles.ts callableBy). */
function expectedTools(profile: 'agent' | 'standard', permissions: string[]): string[] {
  const names = TOOL_PROFILES[profile] as string[];
  return allTools
    .filter((tool) => names.includes(tool.name) && (tool.permission === 'public' || permissions.includes(tool.permission)))
    .map((tool) => tool.name)
    .sort();
}

describe('every entry setup writes, launched as its client launches it', () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer;
  let tokenFile: string;
  let token: string;
  const realHome = process.env.HOME;

  before(async () => {
    root = await tempDir('live-mem-setup-launch');
    // The SDK's stdio transport passes its default variables (HOME among them) from this process, as
    // a client passes its own: a client runs as the user whose home setup wrote to.
    process.env.HOME = path.join(root.dir, 'home');
    const store = path.join(root.dir, 'team-store');
    const env = { PATH: process.env.PATH ?? '', HOME: root.dir, LIVE_MEM_HOME: store };
    token = String(
      JSON.parse((await execa(process.execPath, [BIN, 'token', 'create', 'alice', '-p', 'read,write', '-s', '*', '--json'], { env, extendEnv: false })).stdout)
        .token,
    );
    tokenFile = path.join(root.dir, 'alice.token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    server = await startHttpServer({ HOME: root.dir, LIVE_MEM_HOME: store });
  });
  after(async () => {
    process.env.HOME = realHome;
    await server?.stop();
    await root?.remove();
  });

  /** setup as a process (HOME is the user's home, the working folder the project), and the entry it wrote. */
  async function setUp(client: ClientName, args: string[], label: string) {
    const home = process.env.HOME as string;
    const project = path.join(root.dir, label, 'webapp');
    await mkdir(project, { recursive: true });
    const done = await execa(process.execPath, [BIN, ...args.slice(0, args.indexOf('setup')), 'setup', client, ...args.slice(args.indexOf('setup') + 1)], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: home },
      extendEnv: false,
      reject: false,
    });
    assert.equal(done.exitCode, 0, done.stderr);
    const scope = args.includes('--scope') ? 'project' : 'user';
    const file = scope === 'project' ? path.join(project, PROJECT_FILE[client] as string) : path.join(home, USER_FILE[client]);
    const entry = JSON.parse(await readFile(file, 'utf8')).mcpServers['live-mem'] as Entry;
    return { entry, home, project };
  }

  /** The SDK client connected to the entry the way `client` connects: a process in its folder, or HTTP with the entry's url and headers. */
  async function launch(client: ClientName, entry: Entry, cwd: string, expand: (value: string) => string = (value) => value): Promise<Client> {
    const mcp = new Client({ name: `${client}-as-written`, version: '0.0.0' });
    if (entry.url !== undefined) {
      const headers = Object.fromEntries(Object.entries(entry.headers ?? {}).map(([key, value]) => [key, expand(value)]));
      await mcp.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers } }));
      return mcp;
    }
    // Cline adds PATH to the entry's env; the SDK's transport adds its defaults (HOME, PATH, USER…) under both.
    const env = client === 'cline' ? { ...entry.env, PATH: process.env.PATH ?? '' } : { ...entry.env };
    await mcp.connect(new StdioClientTransport({ command: entry.command as string, args: entry.args ?? [], env, cwd, stderr: 'ignore' }));
    return mcp;
  }

  /** Launched: it initialises as live-mem, lists the tools expected, and answers as the agent expected. */
  async function assertStarts(mcp: Client, tools: string[], agent: string, what: string): Promise<void> {
    try {
      assert.equal(mcp.getServerVersion()?.name, 'live-mem', what);
      assert.deepEqual((await mcp.listTools()).tools.map((tool) => tool.name).sort(), tools, what);
      const whoami = (await mcp.callTool({ name: 'system_whoami', arguments: {} })).structuredContent as { agent?: string };
      assert.equal(whoami.agent, agent, what);
    } finally {
      await mcp.close();
    }
  }

  for (const client of CLIENTS) {
    const forms: Array<{ label: string; args: string[]; tools: 'agent' | 'standard'; remote?: true; expand?: (value: string) => string }> = [
      { label: 'stdio', args: ['setup'], tools: 'agent' },
      { label: 'stdio --space', args: ['setup', '--space', 'team-web'], tools: 'agent' },
      { label: 'stdio --tools standard', args: ['--tools', 'standard', 'setup'], tools: 'standard' },
      ...(PROJECT_FILE[client] ? [{ label: 'stdio --scope project', args: ['setup', '--scope', 'project'], tools: 'agent' as const }] : []),
      { label: 'http --token-file', args: ['--token-file', '@token', 'setup', '--url', '@url'], tools: 'agent', remote: true },
      { label: 'http --tools standard', args: ['--tools', 'standard', '--token-file', '@token', 'setup', '--url', '@url'], tools: 'standard', remote: true },
      ...(client === 'claude-code' || client === 'cursor'
        ? [
            {
              label: 'http --token-env',
              args: ['setup', '--url', '@url', '--token-env', 'LM_TEAM_TOKEN'],
              tools: 'agent' as const,
              remote: true as const,
              // Expanded as each client expands it when it connects: Claude Code `${NAME}`, Cursor `${env:NAME}`.
              expand: (value: string) => value.replace(client === 'cursor' ? `\${env:LM_TEAM_TOKEN}` : `\${LM_TEAM_TOKEN}`, token),
            },
          ]
        : []),
    ];
    for (const form of forms) {
      it(`${client}, ${form.label}: initialises and lists its tools`, async () => {
        const args = form.args.map((arg) => (arg === '@token' ? tokenFile : arg === '@url' ? server.url : arg));
        const { entry, home, project } = await setUp(client, args, `${client}-${form.label.replace(/\W+/g, '-')}`);
        const cwd = CWD[client] === 'root' ? '/' : project;
        const tools = expectedTools(form.tools, form.remote ? ['read', 'write'] : ['read', 'write', 'admin']);
        const agent = form.remote ? 'alice' : client;
        await assertStarts(await launch(client, entry, cwd, form.expand), tools, agent, `${client} ${form.label} in ${cwd}`);
        // The Claude Code desktop app starts servers in $HOME.
        if (client === 'claude-code' && !form.remote) await assertStarts(await launch(client, entry, home), tools, agent, `${client} ${form.label} in $HOME`);
      });
    }
  }

  it("claude-code --hooks: the SessionStart hook's command runs in the project and exits 0", async () => {
    const { project, home } = await setUp('claude-code', ['setup', '--hooks'], 'claude-code-hooks');
    const settings = JSON.parse(await readFile(path.join(home, '.claude', 'settings.json'), 'utf8')) as {
      hooks: { SessionStart: Array<{ hooks: Array<{ command: string }> }> };
    };
    const command = settings.hooks.SessionStart.at(-1)?.hooks[0]?.command as string;
    const ran = await execa('sh', ['-c', command], { cwd: project, env: { PATH: process.env.PATH ?? '', HOME: home }, extendEnv: false, reject: false });
    assert.equal(ran.exitCode, 0, ran.stderr);
  });
});
