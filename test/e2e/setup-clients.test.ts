/**
 * What `live-mem setup` writes, as a process on a fake home, launched the way each client launches
 * it: the stdio entry by the SDK's stdio client (its command, args and env as written, in a project
 * folder), the HTTP entry by the SDK's Streamable HTTP client against a real `live-mem serve --http`
 * with a token made by `live-mem token create`, Claude Desktop's bridge as a process. --print shows
 * exactly the entry a run writes; the agent profile is the default; --space pins the space.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { BIN, type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { setupNode } from '../helpers/node.js';
import { tempDir } from '../helpers/tmp.js';

const CONFIG = {
  'claude-code': '.claude.json',
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  cursor: '.cursor/mcp.json',
  cline: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
} as const;
type ClientName = keyof typeof CONFIG;
const CLIENTS = Object.keys(CONFIG) as ClientName[];

type Entry = { command?: string; args?: string[]; env?: Record<string, string>; type?: string; url?: string; headers?: Record<string, string> };

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The JSON --print shows: from the first line that opens an object to the line that closes it. */
function printedJson(stdout: string): { mcpServers: Record<string, Entry> } {
  const start = stdout.indexOf('\n{\n');
  const end = stdout.indexOf('\n}\n', start);
  assert.ok(start >= 0 && end > start, stdout);
  return JSON.parse(stdout.slice(start + 1, end + 2));
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string };

describe('live-mem setup: the entries it writes, launched as each client does', () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let store: string;
  let server: HttpServer;
  let token: string;
  let tokenFile: string;
  let bin: string;

  /** The CLI as a process, with a fake home, in a fresh project folder named `webapp`. */
  async function fresh(label: string) {
    const home = path.join(root.dir, label, 'home');
    const project = path.join(root.dir, label, 'webapp');
    await mkdir(home, { recursive: true });
    await mkdir(project, { recursive: true });
    const run = (args: string[], env: Record<string, string> = {}) =>
      execa(process.execPath, [BIN, ...args], { cwd: project, env: { PATH: process.env.PATH ?? '', HOME: home, ...env }, extendEnv: false, reject: false });
    const written = async (client: ClientName): Promise<Entry> => JSON.parse(await readFile(path.join(home, CONFIG[client]), 'utf8')).mcpServers['live-mem'];
    return { home, project, run, written };
  }

  before(async () => {
    root = await tempDir('live-mem-setup-clients');
    bin = await realpath(BIN);
    store = path.join(root.dir, 'team-store');
    const env = { PATH: process.env.PATH ?? '', HOME: root.dir, LIVE_MEM_HOME: store };
    const created = await execa(process.execPath, [BIN, 'token', 'create', 'alice', '-p', 'read,write', '-s', '*', '--json'], { env, extendEnv: false });
    token = String(JSON.parse(created.stdout).token);
    // A token's notes create no space (LIVE_MEM_AUTO_CREATE_SPACES=auto): the team's exists.
    await execa(process.execPath, [BIN, 'space', 'create', 'team'], { env, extendEnv: false });
    tokenFile = path.join(root.dir, 'alice.token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    server = await startHttpServer({ HOME: root.dir, LIVE_MEM_HOME: store });
  });
  after(async () => {
    await server?.stop();
    await root?.remove();
  });

  const variants = (url: () => string): Array<{ label: string; args: () => string[] }> => [
    { label: 'plain', args: () => [] },
    { label: '--space', args: () => ['--space', 'team-web'] },
    { label: '--tools', args: () => ['--tools', 'standard,backup_create'] },
    { label: '--url/--token-file', args: () => ['--url', url(), '--token-file', tokenFile] },
    { label: '--url/--tools', args: () => ['--tools', 'standard', '--url', url(), '--token-file', tokenFile] },
  ];

  for (const client of CLIENTS) {
    for (const { label, args } of variants(() => server.url)) {
      it(`${client} ${label}: --print shows exactly the entry a run writes, and writes nothing`, async () => {
        const { home, project, run, written } = await fresh(`print-${client}-${label.replace(/\W/g, '')}`);
        const printed = await run(['setup', client, ...args(), '--print']);
        assert.equal(printed.exitCode, 0, printed.stderr);
        assert.deepEqual([...(await filesUnder(home)), ...(await filesUnder(project))], [], 'nothing written');
        assert.ok(!printed.stdout.includes(token), 'the token is never printed');
        const shown = printedJson(printed.stdout).mcpServers['live-mem'] as Entry;
        const done = await run(['setup', client, ...args()]);
        assert.equal(done.exitCode, 0, done.stderr);
        const entry = await written(client);
        // What --print shows is what is written, the token aside (shown as where it comes from).
        assert.deepEqual(JSON.parse(JSON.stringify(shown).replaceAll(`<the token in ${tokenFile}>`, token)), entry);

        const remote = label.startsWith('--url');
        if (!remote || client === 'claude-desktop') {
          assert.equal(entry.command, setupNode(home));
          assert.equal(entry.args?.[0], bin);
        }
        if (!remote) {
          assert.equal(entry.env?.LIVE_MEM_AGENT, client);
          assert.equal(entry.env?.LIVE_MEM_TOOLS, label === '--tools' ? 'standard,backup_create' : 'agent', 'the agent profile unless told otherwise');
          assert.equal(entry.env?.LIVE_MEM_SPACE, label === '--space' ? 'team-web' : undefined);
          return;
        }
        const mode = (await stat(path.join(home, CONFIG[client]))).mode & 0o777;
        // --tools with --url asks the server for that profile, in the URL.
        const url = label === '--url/--tools' ? `${server.url}?tools=standard` : server.url;
        if (client === 'claude-desktop') {
          // A bridge that reads the token file at each start: the secret is not in the configuration.
          assert.deepEqual(entry.args?.slice(1), ['--token-file', tokenFile, 'connect', url]);
          assert.doesNotMatch(await readFile(path.join(home, CONFIG[client]), 'utf8'), new RegExp(token));
          assert.match(done.stdout, /claude-desktop reads no remote server from its file/);
          return;
        }
        const type = { 'claude-code': 'http', cline: 'streamableHttp', cursor: undefined }[client];
        assert.deepEqual(entry, { ...(type ? { type } : {}), url, headers: { Authorization: `Bearer ${token}` } });
        assert.equal(mode, 0o600, 'a file holding the token is readable by its owner only');
        assert.match(done.stdout, /readable by you only \(mode 0600\)/);
      });
    }
  }

  it('the stdio entry, launched by the SDK client in a project folder: the agent profile, the pinned space, or the project', async () => {
    const { home, project, run, written } = await fresh('launch-stdio');
    const storeHere = path.join(home, 'store');
    assert.equal((await run(['--home', storeHere, 'setup', 'cursor', '--space', 'pinned-space'])).exitCode, 0);
    assert.equal((await run(['--home', storeHere, 'setup', 'claude-code'])).exitCode, 0);
    // Both start servers in the project (Claude Desktop and Cline start them in `/`: setup-launch.test.ts).
    for (const [client, space] of [
      ['cursor', 'pinned-space'],
      ['claude-code', 'webapp'],
    ] as const) {
      const entry = await written(client);
      const mcp = new Client({ name: `${client}-as-written`, version: '0.0.0' });
      await mcp.connect(
        new StdioClientTransport({
          command: entry.command as string,
          args: entry.args ?? [],
          env: { HOME: home, ...entry.env },
          cwd: project,
          stderr: 'ignore',
        }),
      );
      try {
        const { tools } = await mcp.listTools();
        assert.deepEqual(tools.map((tool) => tool.name).sort(), [...(TOOL_PROFILES.agent as string[])].sort(), 'the twelve tools of the agent profile');
        const written_ = await call(mcp, 'live_note', { content: `${client} was here`, category: 'progress' });
        assert.equal(written_.status, 'created', JSON.stringify(written_));
        const read = await call(mcp, 'live_read', { space_id: space });
        assert.match(JSON.stringify(read), new RegExp(`${client} was here`), `${client}'s note is in ${space}`);
      } finally {
        await mcp.close();
      }
    }
  });

  it('the HTTP entries, sent by the SDK Streamable HTTP client with the written url and headers, list tools and write a note', async () => {
    const { run, written } = await fresh('launch-http');
    const forms: Array<{ client: ClientName; extra: string[]; env?: Record<string, string>; expand?: (value: string) => string }> = [
      { client: 'claude-code', extra: ['--token-file', tokenFile] },
      { client: 'cursor', extra: ['--token-file', tokenFile] },
      { client: 'cline', extra: ['--token-file', tokenFile] },
      // The reference forms, expanded as each client does when it connects.
      { client: 'claude-code', extra: ['--token-env', 'LM_TEAM_TOKEN'], expand: (value) => value.replace(`\${LM_TEAM_TOKEN}`, token) },
      { client: 'cursor', extra: ['--token-env', 'LM_TEAM_TOKEN'], expand: (value) => value.replace(`\${env:LM_TEAM_TOKEN}`, token) },
    ];
    for (const { client, extra, expand } of forms) {
      const done = await run(['setup', client, '--url', server.url, ...extra]);
      assert.equal(done.exitCode, 0, done.stderr);
      const entry = await written(client);
      if (expand) assert.ok(!JSON.stringify(entry).includes(token), 'a reference, not the token');
      const headers = Object.fromEntries(Object.entries(entry.headers ?? {}).map(([key, value]) => [key, expand ? expand(value) : value]));
      const mcp = new Client({ name: `${client}-http`, version: '0.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(entry.url as string), { requestInit: { headers } }));
      try {
        assert.ok((await mcp.listTools()).tools.some((tool) => tool.name === 'live_note'));
        const note = await call(mcp, 'live_note', { space_id: 'team', content: `${client} over http`, category: 'observation' });
        assert.equal(note.status, 'created', JSON.stringify(note));
        assert.equal((await call(mcp, 'system_whoami')).agent, 'alice', 'the agent is the token');
      } finally {
        await mcp.close();
      }
    }
  });

  it("Claude Desktop's bridge, launched as written, relays to the server; a refused token is an answer, not a hang", async () => {
    const { home, run, written } = await fresh('launch-bridge');
    assert.equal((await run(['setup', 'claude-desktop', '--url', server.url, '--token-file', tokenFile])).exitCode, 0);
    const entry = await written('claude-desktop');
    const mcp = new Client({ name: 'claude-desktop-bridge', version: '0.0.0' });
    await mcp.connect(
      new StdioClientTransport({ command: entry.command as string, args: entry.args ?? [], env: { HOME: home, ...entry.env }, stderr: 'ignore' }),
    );
    try {
      assert.ok((await mcp.listTools()).tools.some((tool) => tool.name === 'memory_context'));
      const note = await call(mcp, 'live_note', { space_id: 'team', content: 'from claude desktop, relayed', category: 'decision' });
      assert.equal(note.status, 'created', JSON.stringify(note));
      assert.equal((await call(mcp, 'system_whoami')).agent, 'alice');
    } finally {
      await mcp.close();
    }
    const read = await execa(process.execPath, [BIN, '--home', store, 'read', 'team', '--json'], {
      env: { PATH: process.env.PATH ?? '', HOME: root.dir },
      extendEnv: false,
    });
    assert.match(read.stdout, /from claude desktop, relayed/, 'the note is in the server store');

    const wrong = path.join(root.dir, 'wrong.token');
    await writeFile(wrong, 'lm_not-a-token\n');
    await chmod(wrong, 0o600);
    const refused = new Client({ name: 'claude-desktop-bridge', version: '0.0.0' });
    const args = (entry.args ?? []).map((arg) => (arg === tokenFile ? wrong : arg));
    await assert.rejects(
      refused.connect(new StdioClientTransport({ command: entry.command as string, args, env: { HOME: home }, stderr: 'ignore' })),
      /live-mem server at .* did not answer/,
    );
    await refused.close();
  });

  it('connect and setup --url: no URL credential in any output or error; a readable token file and a token in clear are warned about', async () => {
    const { home, run } = await fresh('weak-remote');
    const env = { PATH: process.env.PATH ?? '', HOME: home };
    const open = path.join(root.dir, 'open.token');
    await writeFile(open, `${token}\n`);
    await chmod(open, 0o644);
    const secret = 's3cretPass';
    // A user and password in the URL: refused, and not repeated.
    for (const url of [`http://alice:${secret}@127.0.0.1:9/mcp`, `http://alice:${secret}@[bad/mcp`]) {
      const result = await execa(process.execPath, [BIN, '--token-file', tokenFile, 'connect', url], { env, extendEnv: false, reject: false, input: '' });
      assert.equal(result.exitCode, 2, result.stderr);
      assert.ok(!`${result.stdout}${result.stderr}`.includes(secret), result.stderr);
      const set = await run(['setup', 'cursor', '--url', url, '--token-file', tokenFile]);
      assert.equal(set.exitCode, 2, set.stderr);
      assert.ok(!`${set.stdout}${set.stderr}`.includes(secret), set.stderr);
    }
    // A server over plain http on another host (0.0.0.0:1 refuses at once), with the token in a file others can read.
    const far = `http://0.0.0.0:1/mcp?private_token=${secret}`;
    const child = execa(process.execPath, [BIN, '--token-file', open, 'connect', far], { env, extendEnv: false, reject: false });
    const answer = new Promise<string>((resolve) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out);
      });
    });
    child.stdin?.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } })}\n`,
    );
    const reply = await answer;
    child.stdin?.end();
    const done = await child;
    assert.match(reply, /did not answer/);
    assert.ok(!reply.includes(secret), reply);
    assert.ok(!done.stderr.includes(secret), done.stderr);
    assert.match(done.stderr, new RegExp(`token file ${open} can be read by every user of this machine \\(mode 0644\\)`));
    assert.match(done.stderr, /the token travels in clear to 0\.0\.0\.0:1 over http:\/\//);
    const set = await run(['setup', 'claude-code', '--url', far, '--token-file', open, '--json']);
    assert.equal(set.exitCode, 0, set.stderr);
    assert.ok(!set.stdout.includes(secret), set.stdout);
    const notes = (JSON.parse(set.stdout) as { notes: string[] }).notes.join('\n');
    assert.match(notes, /can be read by every user of this machine/);
    assert.match(notes, /travels in clear/);
    // Loopback over http, a private token file: nothing to warn about.
    const near = await run(['setup', 'claude-code', '--url', server.url, '--token-file', tokenFile, '--json']);
    assert.doesNotMatch((JSON.parse(near.stdout) as { notes: string[] }).notes.join('\n'), /can be read by|travels in clear/);
  });

  it('refuses what an HTTP entry cannot honour, and a token pasted into a project file, writing nothing', async () => {
    const { home, project, run } = await fresh('refusals');
    const cases: Array<[string[], RegExp]> = [
      [['setup', 'cursor', '--url', 'https://m.example/mcp'], /--url needs the token/],
      [['setup', 'cursor', '--url', 'ftp://m.example/mcp', '--token-file', tokenFile], /--url must be an http\(s\) URL/],
      [['--tools', 'all,nope', 'setup', 'cursor', '--url', 'https://m.example/mcp', '--token-file', tokenFile], /--tools: unknown tool .*nope/],
      [['--agent', 'x', 'setup', 'cursor', '--url', 'https://m.example/mcp', '--token-file', tokenFile], /--agent: not with --url/],
      [['setup', 'cursor', '--space', 'x', '--url', 'https://m.example/mcp', '--token-file', tokenFile], /--space: not with --url/],
      [['setup', 'cline', '--url', 'https://m.example/mcp', '--token-env', 'T'], /cline does not expand variables/],
      [['setup', 'claude-code', '--scope', 'project', '--url', 'https://m.example/mcp', '--token-file', tokenFile], /must not hold the token; use --token-env/],
      [['setup', 'cursor', '--space', 'no spaces!'], /invalid space_id/],
      [['setup', 'cursor', '--tools', 'agent,no_such_tool'], /--tools: unknown tool .*no_such_tool/],
      [['setup', 'cursor', '--hooks'], /--hooks is for claude-code/],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      assert.equal(result.exitCode, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(' '));
    }
    assert.deepEqual([...(await filesUnder(home)), ...(await filesUnder(project))], []);
  });
});
