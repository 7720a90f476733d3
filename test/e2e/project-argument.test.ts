/**
 * The project argument (issue 40 item 1): every tool that works in a space takes `project`, the
 * folder or the git remote the agent works in. Claude Desktop and Cline start servers in `/` and
 * send no roots: here their entries, written by a plain `live-mem setup` run in a project, are
 * launched by the SDK's stdio client as each launches them (Claude Desktop: `/`, its inherited
 * environment; Cline: `/`, PATH and the entry's env only), their notes land in the project's space,
 * and Claude Code finds them in a second clone (https, another folder name), as does the Claude Code
 * desktop app started in `$HOME`. acme/api and other/api stay apart. Over Streamable HTTP a folder
 * is refused with the way to its remote, and a token for two projects' spaces follows the remote
 * each call names, a third refused.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { projectIdentity } from '../../src/config/project-identity.js';
import { BIN, type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

type Result = Record<string, unknown> & { status: string };
type Entry = { command: string; args: string[]; env: Record<string, string> };

const CONFIG = {
  'claude-code': '.claude.json',
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  cursor: '.cursor/mcp.json',
  cline: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
} as const;
type ClientName = keyof typeof CONFIG;

/** git with no user or system configuration of this machine. */
function git(cwd: string, ...args: string[]): void {
  const run = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
  assert.equal(run.status, 0, run.stderr);
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<Result> =>
  (await client.callTool({ name, arguments: args })).structuredContent as Result;

const contents = (read: Result) => (read.notes as Array<{ agent: string; content: string }>).map((note) => `${note.agent}: ${note.content}`).sort();

describe('the project argument, from clients that start live-mem in / with no roots (stdio)', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let home: string;
  let store: string;
  /** acme/api cloned over ssh where the person works, and over https as `acme-api-2` on another machine; other/api. */
  let deskClone: string;
  let laptopClone: string;
  let otherClone: string;
  let acmeApi: string;
  let otherApi: string;
  const entries = {} as Record<ClientName, Entry>;

  const spaceOf = (dir: string) => {
    const identity = projectIdentity(dir, home);
    assert.ok('space_id' in identity, JSON.stringify(identity));
    return identity.space_id;
  };
  const spaces = async () => (await readdir(store)).filter((name) => !name.startsWith('_') && !name.startsWith('.')).sort();

  /**
   * The entry `setup` wrote for `client`, launched as that client launches it: no roots declared,
   * in `cwd`. Claude Desktop passes its inherited environment (the SDK's default one, home included);
   * Cline passes PATH and the entry's env only (the SDK's defaults are unset: undefined is left out
   * of a child's environment).
   */
  async function launch<T>(client: ClientName, cwd: string, run: (mcp: Client) => Promise<T>): Promise<T> {
    const entry = entries[client];
    const inherited =
      client === 'cline'
        ? { ...Object.fromEntries(Object.keys(getDefaultEnvironment()).map((key) => [key, undefined])), PATH: process.env.PATH ?? '' }
        : { ...getDefaultEnvironment(), HOME: home };
    const mcp = new Client({ name: `${client}-as-launched`, version: '0.0.0' });
    await mcp.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { ...inherited, ...entry.env } as Record<string, string>,
        cwd,
        stderr: 'ignore',
      }),
    );
    try {
      return await run(mcp);
    } finally {
      await mcp.close();
    }
  }

  before(async () => {
    tmp = await tempDir('live-mem-project-argument');
    home = path.join(tmp.dir, 'home');
    store = path.join(tmp.dir, 'store');
    deskClone = path.join(home, 'src', 'api');
    laptopClone = path.join(tmp.dir, 'laptop', 'acme-api-2');
    otherClone = path.join(tmp.dir, 'other', 'api');
    for (const [clone, remote] of [
      [deskClone, 'git@github.com:acme/api.git'],
      [laptopClone, 'https://github.com/Acme/API.git'],
      [otherClone, 'git@github.com:other/api.git'],
    ] as const) {
      await mkdir(path.join(clone, 'src'), { recursive: true });
      git(clone, 'init', '-q');
      git(clone, 'remote', 'add', 'origin', remote);
    }
    acmeApi = spaceOf(deskClone);
    otherApi = spaceOf(otherClone);
    // A plain setup, run in the project: no --space.
    for (const client of Object.keys(CONFIG) as ClientName[]) {
      const run = await execa(process.execPath, [BIN, '--home', store, 'setup', client], {
        cwd: deskClone,
        env: { PATH: process.env.PATH ?? '', HOME: home },
        extendEnv: false,
        reject: false,
      });
      assert.equal(run.exitCode, 0, run.stderr);
      const said = client === 'claude-desktop' || client === 'cline';
      assert.equal(run.stdout.includes(`${client} starts live-mem in / and says nothing of the project`), said, `${client}: ${run.stdout}`);
      entries[client] = JSON.parse(await readFile(path.join(home, CONFIG[client]), 'utf8')).mcpServers['live-mem'];
      assert.equal(entries[client].env.LIVE_MEM_SPACE, undefined, 'nothing pinned');
    }
  });
  after(async () => {
    await tmp?.remove();
  });

  it("Claude Desktop and Cline, started in /: told to name the project, their notes with it land in the project's space", async () => {
    await launch('claude-desktop', '/', async (mcp) => {
      assert.match(mcp.getInstructions() ?? '', /Give project on every call, your workspace folder's absolute path/);
      const note = (await mcp.listTools()).tools.find((tool) => tool.name === 'live_note');
      assert.deepEqual(note?.inputSchema.properties?.project, { type: 'string', description: 'folder or git remote' });

      const refused = await call(mcp, 'live_note', { category: 'decision', content: 'where?' });
      assert.equal(refused.code, 'invalid_input');
      assert.match(String(refused.hint), /Give project, your workspace folder's absolute path/);

      const written = await call(mcp, 'live_note', { project: deskClone, category: 'decision', content: 'the API paginates with cursors' });
      assert.equal(written.status, 'created', JSON.stringify(written));
      assert.deepEqual([written.space_id, written.space_created, written.space_source], [acmeApi, true, 'argument']);
      assert.match(
        String(written.space_source_detail),
        /^the project argument: the origin remote github\.com:acme\/api\.git \(project github\.com\/acme\/api\)/,
      );
    });
    await launch('cline', '/', async (mcp) => {
      assert.match(mcp.getInstructions() ?? '', /Give project on every call/);
      // From a folder inside the project, as Cline's working folder may be.
      const written = await call(mcp, 'live_note', { project: path.join(deskClone, 'src'), category: 'todo', content: 'document the cursor format' });
      assert.deepEqual([written.status, written.space_id, written.space_created], ['created', acmeApi, undefined]);
      // The remote, as a browser shows it, is the same project.
      const read = await call(mcp, 'live_read', { project: 'github.com/acme/api' });
      assert.deepEqual(contents(read), ['claude-desktop: the API paginates with cursors', 'cline: document the cursor format']);
      const whoami = await call(mcp, 'system_whoami');
      assert.deepEqual([whoami.default_space, whoami.space_source], [undefined, 'none'], 'no default: each call names its project');
    });
    assert.deepEqual(await spaces(), [acmeApi]);
    const meta = JSON.parse(await readFile(path.join(store, acmeApi, '_meta.json'), 'utf8'));
    assert.equal(meta.project, 'github.com/acme/api', 'the space made by the argument records its project');
  });

  it('Claude Code in a second clone (https, another folder name) finds them; so does its desktop app in $HOME, with the argument', async () => {
    await launch('claude-code', laptopClone, async (mcp) => {
      const read = await call(mcp, 'live_read', {});
      assert.equal(read.space_id, acmeApi);
      assert.deepEqual(contents(read), ['claude-desktop: the API paginates with cursors', 'cline: document the cursor format']);
      assert.equal((await call(mcp, 'system_whoami')).space_source, 'folder');
    });
    await launch('claude-code', home, async (mcp) => {
      assert.equal((await call(mcp, 'live_read', {})).code, 'invalid_input', '$HOME is no project');
      const found = await call(mcp, 'memory_search', { project: laptopClone, query: 'cursors' });
      assert.equal(found.status, 'ok', JSON.stringify(found));
      assert.match(JSON.stringify(found.results), /paginates with cursors/);
    });
  });

  it('acme/api and other/api stay apart: Cursor in other/api and Claude Desktop naming each', async () => {
    await launch('cursor', otherClone, async (mcp) => {
      const read = await call(mcp, 'live_read', {});
      assert.deepEqual([read.space_id, read.total, read.space_exists], [otherApi, 0, false], "acme's notes are not other/api's");
      assert.equal((await call(mcp, 'live_note', { category: 'decision', content: 'other/api pages by offset' })).space_id, otherApi);
    });
    await launch('claude-desktop', '/', async (mcp) => {
      assert.deepEqual(contents(await call(mcp, 'live_read', { project: otherClone })), ['cursor: other/api pages by offset']);
      assert.deepEqual(contents(await call(mcp, 'live_read', { project: 'git@github.com:other/api.git' })), ['cursor: other/api pages by offset']);
      assert.doesNotMatch(JSON.stringify(await call(mcp, 'live_read', { project: deskClone })), /offset/);
      // space_id, when given, is the space: the argument is not read.
      const named = await call(mcp, 'live_read', { space_id: otherApi, project: deskClone });
      assert.deepEqual(contents(named), ['cursor: other/api pages by offset']);
    });
    assert.notEqual(acmeApi, otherApi);
    assert.deepEqual(await spaces(), [acmeApi, otherApi].sort());
  });

  it('an argument that names no project is refused, saying why, and nothing is written', async () => {
    const before = await spaces();
    await launch('cline', '/', async (mcp) => {
      for (const [project, why] of [
        ['api', /project: 'api' is neither your workspace folder's absolute path nor a git remote/],
        [path.join(tmp.dir, 'nowhere'), /is no folder on the machine the server runs on/],
        ['/', /root of the file system, no project/],
      ] as const) {
        const refused = await call(mcp, 'live_note', { project, category: 'todo', content: 'lost?' });
        assert.equal(refused.code, 'invalid_input', project);
        assert.match(String(refused.message), why, project);
      }
    });
    assert.deepEqual(await spaces(), before);
  });

  it('a pinned space comes before the argument', async () => {
    const pinned = { ...entries['claude-desktop'], env: { ...entries['claude-desktop'].env, LIVE_MEM_SPACE: 'pinned-here' } };
    const saved = entries['claude-desktop'];
    entries['claude-desktop'] = pinned;
    try {
      await launch('claude-desktop', '/', async (mcp) => {
        const written = await call(mcp, 'live_note', { project: deskClone, category: 'todo', content: 'pinned' });
        assert.deepEqual([written.space_id, written.space_source], ['pinned-here', 'LIVE_MEM_SPACE']);
      });
    } finally {
      entries['claude-desktop'] = saved;
    }
  });
});

describe('the project argument over Streamable HTTP', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  const cli = async (...args: string[]) => {
    const run = await execa(process.execPath, [BIN, '--home', tmp.dir, ...args, '--json'], {
      env: { PATH: process.env.PATH ?? '', HOME: tmp.dir },
      extendEnv: false,
    });
    return JSON.parse(run.stdout) as Result;
  };
  const connect = async (token: string) => {
    const client = new Client({ name: 'http-project-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  const notesIn = async (spaceId: string) => (await readdir(path.join(tmp.dir, spaceId, 'live')).catch(() => [])).filter((name) => name.endsWith('.md'));

  before(async () => {
    tmp = await tempDir('live-mem-http-project');
    // The operator, with no clone, makes each project's space from its remote.
    for (const [name, remote] of [
      ['acme', 'github.com/acme/api'],
      ['other', 'git@github.com:other/api.git'],
      ['web', 'https://github.com/acme/web'],
    ] as const) {
      const made = await cli('space', 'bind', '--new', '--project', remote);
      assert.equal(made.status, 'created');
      ids[name] = String(made.space_id);
    }
    // A space made by the rule before (the repository's name, no project recorded): a person must decide.
    await cli('space', 'create', 'legacy');
    tokens.two = String((await cli('token', 'create', 'dev', '-p', 'read,write', '-s', `${ids.acme},${ids.other}`)).token);
    tokens.legacy = String((await cli('token', 'create', 'old', '-p', 'read,write', '-s', 'legacy')).token);
    tokens.one = String((await cli('token', 'create', 'solo', '-p', 'read,write', '-s', ids.acme as string)).token);
    server = await startHttpServer({ LIVE_MEM_HOME: tmp.dir });
  });
  after(async () => {
    await server?.stop();
    await tmp?.remove();
  });

  it('a token for two spaces: the remote each call names picks its space; a third project is refused', async () => {
    const client = await connect(tokens.two as string);
    try {
      assert.match(client.getInstructions() ?? '', /Give project on every call, your workspace's git remote \(`git remote get-url origin` prints it\)/);
      const acme = await call(client, 'live_note', { project: 'https://github.com/acme/api.git', category: 'decision', content: 'acme: cursors' });
      assert.deepEqual([acme.status, acme.space_id], ['created', ids.acme]);
      const other = await call(client, 'live_note', { project: 'github.com/Other/API', category: 'decision', content: 'other: offsets' });
      assert.deepEqual([other.status, other.space_id], ['created', ids.other]);
      assert.deepEqual(contents(await call(client, 'live_read', { project: 'git@github.com:acme/api.git' })), ['dev: acme: cursors']);

      const third = await call(client, 'live_note', { project: 'github.com/acme/web', category: 'todo', content: 'not mine' });
      assert.equal(third.status, 'forbidden', JSON.stringify(third));
      assert.match(String(third.message), new RegExp(`the project github\\.com/acme/web uses the space '${ids.web}', which this token may not use`));
      assert.equal((await call(client, 'live_read', { project: 'github.com/acme/web' })).status, 'forbidden', 'reads too');
      assert.equal((await call(client, 'live_note', { category: 'todo', content: 'where?' })).code, 'invalid_input', 'no project, no default');
    } finally {
      await client.close();
    }
    assert.deepEqual((await notesIn(ids.web as string)).length, 0);
  });

  it('a folder is refused with the way to its remote; a token limited to one space keeps its default and its limit', async () => {
    const client = await connect(tokens.one as string);
    try {
      const folder = await call(client, 'live_note', { project: '/home/me/src/api', category: 'todo', content: 'from my folder' });
      assert.equal(folder.code, 'invalid_input');
      assert.match(String(folder.message), /\/home\/me\/src\/api is a folder of your machine, which means nothing to a server reached over HTTP/);
      assert.match(String(folder.message), /`git remote get-url origin` in that folder prints it/);

      assert.equal((await call(client, 'live_note', { category: 'todo', content: 'by default' })).space_id, ids.acme);
      assert.equal((await call(client, 'live_note', { project: 'github.com/acme/api', category: 'todo', content: 'named' })).space_id, ids.acme);
      assert.equal((await call(client, 'live_note', { project: 'github.com/other/api', category: 'todo', content: 'elsewhere' })).status, 'forbidden');
    } finally {
      await client.close();
    }
    assert.equal((await notesIn(ids.acme as string)).length, 3, "acme's note, the default's and the named one; nothing from a folder");
    assert.equal((await notesIn(ids.other as string)).length, 1);
  });

  it('a project whose older space is undecided: its token is told how to decide; another token learns nothing of that space', async () => {
    const older = await connect(tokens.legacy as string);
    try {
      const refused = await call(older, 'live_note', { project: 'github.com/acme/legacy', category: 'todo', content: 'which space?' });
      assert.equal(refused.status, 'conflict', JSON.stringify(refused));
      assert.match(String(refused.message), /an older space 'legacy' exists.*`live-mem space bind legacy`/);
    } finally {
      await older.close();
    }
    const stranger = await connect(tokens.two as string);
    try {
      const refused = await call(stranger, 'live_read', { project: 'github.com/acme/legacy' });
      assert.equal(refused.status, 'forbidden');
      assert.match(String(refused.message), /uses the space 'acme-legacy-[a-z2-7]{10}', which this token may not use/);
      assert.doesNotMatch(String(refused.message), /'legacy'/);
    } finally {
      await stranger.close();
    }
    assert.equal((await notesIn('legacy')).length, 0);
  });
});
