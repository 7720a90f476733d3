/**
 * One project, one space, from any client (issue 29): the built binary over stdio, started where
 * real clients start it (`/` like Claude Desktop, `$HOME` like a desktop app, a clone of the
 * project), with the SDK's client declaring `roots` and answering `roots/list` or not; real git
 * clones of one repository in folders of different names; then over Streamable HTTP, where only a
 * token limited to one space gives a default. And the first call on a project with no space yet
 * answers, empty, instead of `not_found`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Root } from '@modelcontextprotocol/sdk/types.js';
import { projectIdentity } from '../../src/config/project-identity.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { ROOTS_WAIT_MS } from '../../src/mcp/default-space.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { spawnServer, startHttpServer, type SpawnedServer, type SpawnOptions } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

/** git with no user or system configuration of this machine. */
function git(cwd: string, ...args: string[]): void {
  const run = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
  assert.equal(run.status, 0, run.stderr);
}

const root = (dir: string): Root => ({ uri: pathToFileURL(dir).href, name: path.basename(dir) });

/** A folder's project space, as the server finds it (config/project-identity.ts). */
function spaceOf(dir: string): string {
  const identity = projectIdentity(dir, undefined);
  assert.ok('space_id' in identity, JSON.stringify(identity));
  return identity.space_id;
}

describe('the default space of a project, from any client (stdio)', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let home: string;
  let store: string;
  /** One repository, `webapp`, cloned by two people into folders of different names. */
  let aliceClone: string;
  let bobClone: string;
  let apiRepo: string;
  /** Their spaces: `remotes-webapp-<hash>` (a local remote: its path), `acme-api-<hash>`. */
  let webapp: string;
  let api: string;

  const serve = async <T>(cwd: string, options: Omit<SpawnOptions, 'cwd'>, run: (server: SpawnedServer) => Promise<T>, env: Record<string, string> = {}) => {
    const server = await spawnServer({ HOME: home, LIVE_MEM_HOME: store, LIVE_MEM_LOG_LEVEL: 'warn', ...env }, [], { cwd, ...options });
    try {
      return await run(server);
    } finally {
      await server.close();
    }
  };
  const notesIn = async (spaceId: string) => (await readdir(path.join(store, spaceId, 'live')).catch(() => [])).filter((name) => name.endsWith('.md'));

  before(async () => {
    tmp = await tempDir('live-mem-project');
    home = path.join(tmp.dir, 'home', 'me');
    store = path.join(tmp.dir, 'store');
    await mkdir(home, { recursive: true });
    const remote = path.join(tmp.dir, 'remotes', 'webapp.git');
    await mkdir(remote, { recursive: true });
    git(remote, 'init', '-q', '--bare');
    const seed = path.join(tmp.dir, 'seed');
    await mkdir(seed);
    git(seed, 'init', '-q');
    git(seed, 'commit', '-q', '--allow-empty', '-m', 'first');
    git(seed, 'push', '-q', remote, 'HEAD:refs/heads/main');
    aliceClone = path.join(tmp.dir, 'alice', 'webapp');
    bobClone = path.join(tmp.dir, 'bob', 'wa-clone');
    for (const clone of [aliceClone, bobClone]) {
      await mkdir(path.dirname(clone), { recursive: true });
      git(path.dirname(clone), 'clone', '-q', pathToFileURL(remote).href, path.basename(clone));
    }
    apiRepo = path.join(tmp.dir, 'work', 'api-checkout');
    await mkdir(apiRepo, { recursive: true });
    git(apiRepo, 'init', '-q');
    git(apiRepo, 'remote', 'add', 'origin', 'git@github.com:acme/api.git');
    webapp = spaceOf(aliceClone);
    api = spaceOf(apiRepo);
  });
  after(async () => {
    await tmp?.remove();
  });

  it("a server started in / with a root in a git clone writes to the project's space", async () => {
    // The first root is no project (the file system's root): the clone's root decides.
    const roots = [root('/'), root(aliceClone)];
    await serve('/', { roots: () => roots }, async (server) => {
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.default_space, webapp);
      assert.equal(whoami.space_source, 'roots');
      assert.match(String(whoami.space_source_detail), /origin remote .*webapp\.git/);
      assert.match(server.client.getInstructions() ?? '', /Leave space_id empty/);

      const note = await server.call('live_note', { category: 'decision', content: 'orders go through the queue', agent: 'alice' });
      assert.equal(note.status, 'created');
      assert.equal(note.space_id, webapp);
      assert.equal(note.space_created, true);
      assert.equal(note.space_source, 'roots', 'the write that made the space says which rule chose it');
    });
    assert.equal((await notesIn(webapp)).length, 1);
  });

  it('a second clone of the remote in a folder of another name, started there without roots, shares the space', async () => {
    await serve(bobClone, {}, async (server) => {
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.default_space, webapp);
      assert.equal(whoami.space_source, 'folder');
      const read = await server.call('live_read', {});
      assert.equal(read.space_id, webapp);
      assert.deepEqual(
        (read.notes as Array<{ content: string; agent: string }>).map((note) => [note.agent, note.content]),
        [['alice', 'orders go through the queue']],
      );
      const second = await server.call('live_note', { category: 'progress', content: 'queue consumer done' });
      assert.equal(second.space_id, webapp);
      assert.equal(second.space_created, undefined);
    });
    assert.equal((await notesIn(webapp)).length, 2);
    assert.ok(!(await readdir(store)).includes('wa-clone'), 'no space named after the clone');
  });

  for (const [where, cwd] of [
    ['/', () => '/'],
    ['$HOME', () => home],
  ] as const)
    it(`a server started in ${where} with no roots and nothing pinned refuses a call without space_id, and names the fix`, async () => {
      // A home folder kept in git (dotfiles) is no project either.
      if (where === '$HOME') {
        git(home, 'init', '-q');
        git(home, 'remote', 'add', 'origin', 'https://github.com/me/dotfiles.git');
      }
      const before = await readdir(store).catch(() => []);
      await serve(cwd(), {}, async (server) => {
        assert.match(server.client.getInstructions() ?? '', /Give project on every call, your workspace folder's absolute path/);
        assert.doesNotMatch(server.client.getInstructions() ?? '', /Leave space_id empty/);
        const whoami = await server.call('system_whoami');
        assert.equal(whoami.default_space, undefined);
        assert.equal(whoami.space_source, 'none');

        const refused = await server.call('live_note', { category: 'todo', content: 'where does this go?' });
        assert.equal(refused.status, 'error');
        assert.equal(refused.code, 'invalid_input');
        assert.match(String(refused.message), /project or space_id is required/);
        for (const fix of ['Give project, your workspace folder', 'space_id', 'LIVE_MEM_SPACE', 'live-mem setup <client> --space NAME'])
          assert.ok(String(refused.hint).includes(fix), `${fix}: ${refused.hint}`);
        assert.equal((await server.call('memory_context', {})).code, 'invalid_input', 'reads too');
        await assert.rejects(server.client.getPrompt({ name: 'memory_start', arguments: {} }), /space argument is required/);

        // Named, it works as ever.
        assert.equal((await server.call('live_note', { space_id: 'named-space', category: 'todo', content: 'named' })).status, 'created');
      });
      assert.deepEqual(
        (await readdir(store)).filter((name) => name !== 'named-space'),
        before.filter((name) => name !== 'named-space'),
        'no catch-all space was made',
      );
    });

  it('a pinned space (LIVE_MEM_SPACE) comes before the roots', async () => {
    await serve(
      '/',
      { roots: () => [root(aliceClone)] },
      async (server) => {
        const whoami = await server.call('system_whoami');
        assert.deepEqual([whoami.default_space, whoami.space_source], ['team-notes', 'LIVE_MEM_SPACE']);
      },
      { LIVE_MEM_SPACE: 'team-notes' },
    );
  });

  it('roots changing (notifications/roots/list_changed) moves the default space', async () => {
    let roots = [root(aliceClone)];
    let asked = 0;
    await serve(
      '/',
      {
        roots: () => {
          asked++;
          return roots;
        },
      },
      async (server) => {
        assert.equal((await server.call('system_whoami')).default_space, webapp);
        await server.call('live_read', {});
        assert.equal(asked, 1, 'the answer is kept between calls');

        roots = [root(apiRepo)];
        await server.client.sendRootsListChanged();
        let whoami = await server.call('system_whoami');
        // The notification and the next call race on the wire: wait for the new answer, not for a time.
        for (let i = 0; i < 100 && whoami.default_space !== api; i++) whoami = await server.call('system_whoami');
        assert.equal(whoami.default_space, api);
        assert.equal(whoami.space_source, 'roots');
        assert.equal((await server.call('live_note', { category: 'todo', content: 'api work' })).space_id, api);
      },
    );
    assert.equal((await notesIn(api)).length, 1);
  });

  it('a client that declares roots and never answers does not hang a call: after a bounded wait, the next rule, said', async () => {
    await serve(bobClone, { roots: () => new Promise<Root[]>(() => undefined) }, async (server) => {
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.default_space, webapp);
      assert.equal(whoami.space_source, 'folder');
      assert.match(String(whoami.space_source_detail), new RegExp(`did not answer roots/list within ${ROOTS_WAIT_MS / 1000} s`));
      // The outcome holds for the connection: the next call does not wait again.
      assert.equal((await server.call('live_note', { category: 'todo', content: 'still here' })).space_id, webapp);
    });
  });

  it('a client whose roots are no project (its home folder) falls back to the folder, then refuses', async () => {
    await serve('/', { roots: () => [root(home)] }, async (server) => {
      assert.match(server.client.getInstructions() ?? '', /its roots/, 'a default may come from the roots');
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.space_source, 'none');
      assert.match(String(whoami.space_source_detail), /home folder/);
    });
  });
});

describe('the first call on a project with no space yet', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let project: string;
  let fresh: string;
  before(async () => {
    tmp = await tempDir('live-mem-first-call');
    project = path.join(tmp.dir, 'checkout');
    await mkdir(project);
    git(project, 'init', '-q');
    git(project, 'remote', 'add', 'origin', 'https://github.com/acme/fresh.git');
    fresh = spaceOf(project);
  });
  after(async () => {
    await tmp?.remove();
  });

  it('every read of the default space answers empty and well-formed, saying the first note creates it; a mistyped space_id stays not_found', async () => {
    const store = path.join(tmp.dir, 'store');
    const server = await spawnServer({ HOME: tmp.dir, LIVE_MEM_HOME: store, LIVE_MEM_LOG_LEVEL: 'warn' }, [], { cwd: project });
    try {
      // Listing the tools makes the SDK's client check every structuredContent against its output schema.
      await server.client.listTools();
      const reads: Array<[string, Record<string, unknown>]> = [
        ['memory_context', { query: 'what is the plan' }],
        ['space_summary', {}],
        ['live_read', {}],
        ['memory_search', { query: 'queue' }],
        ['live_search', { query: 'queue' }],
        ['bank_read_all', {}],
        ['bank_list', {}],
        ['space_info', {}],
        ['bank_consolidation_status', {}],
        // Named as the default is, it is the caller's own space too.
        ['memory_context', { space_id: fresh }],
      ];
      for (const [tool, args] of reads) {
        const result = await server.call(tool, args);
        assert.equal(result.status, 'ok', `${tool}: ${JSON.stringify(result)}`);
        assert.equal(result.space_id ?? fresh, fresh, tool);
        assert.equal(result.space_exists, false, tool);
        assert.match(String(result.message), /does not exist yet: .*first note/, tool);
      }
      const context = await server.call('memory_context', {});
      assert.equal(typeof context.text, 'string');
      assert.deepEqual(await server.call('live_read', {}).then((read) => [read.notes, read.total, read.has_more]), [[], 0, false]);
      assert.match(String((await server.call('space_summary', {})).rules), /activeContext\.md/, 'the rules the first note will give it');
      // A bank file is missing in a new space as in an empty one.
      assert.equal((await server.call('bank_read', { filename: 'activeContext.md' })).status, 'not_found');

      const typo = await server.call('memory_context', { space_id: 'frsh' });
      assert.equal(typo.status, 'not_found');
      assert.deepEqual(await readdir(store).catch(() => []), [], 'reads created nothing');

      assert.equal((await server.call('live_note', { category: 'progress', content: 'started' })).space_created, true);
      const after = await server.call('memory_context', {});
      assert.equal(after.space_exists, undefined);
      assert.match(String(after.text), /started/);
    } finally {
      await server.close();
    }
  });

  it('where a note would not create it (LIVE_MEM_AUTO_CREATE_SPACES=off), the read stays not_found', async () => {
    const server = await spawnServer(
      { HOME: tmp.dir, LIVE_MEM_HOME: path.join(tmp.dir, 'off-store'), LIVE_MEM_AUTO_CREATE_SPACES: 'off', LIVE_MEM_LOG_LEVEL: 'warn' },
      [],
      { cwd: project },
    );
    try {
      const result = await server.call('memory_context', {});
      assert.equal(result.status, 'not_found');
      assert.match(String(result.hint), /space_create/);
    } finally {
      await server.close();
    }
  });
});

describe('the default space over Streamable HTTP', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const tokens: Record<string, string> = {};
  let url = '';
  let stop: () => Promise<void> = async () => undefined;

  const connect = async (token: string) => {
    const client = new Client({ name: 'http-space-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    await client.listTools();
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string };

  before(async () => {
    tmp = await tempDir('live-mem-http-space');
    const core = createCore({ storage: createFsDriver(tmp.dir) });
    const owner = ownerCaller('owner');
    await core.spaces.create(owner, { space_id: 'alpha' });
    await core.spaces.create(owner, { space_id: 'beta' });
    tokens.one = (await core.auth.create(owner, { name: 'one', permissions: 'read,write', space_ids: 'alpha' })).token;
    tokens.two = (await core.auth.create(owner, { name: 'two', permissions: 'read,write', space_ids: 'alpha,beta' })).token;
    tokens.every = (await core.auth.create(owner, { name: 'every', permissions: 'read,write', space_ids: '*' })).token;
    // The server's own folder is a project, and a space is pinned: neither is any HTTP client's default.
    const server = await startHttpServer({ LIVE_MEM_HOME: tmp.dir, LIVE_MEM_SPACE: 'pinned-here' });
    url = server.url;
    stop = server.stop;
  });
  after(async () => {
    await stop();
    await tmp?.remove();
  });

  it('a token limited to one space uses it as its default', async () => {
    const client = await connect(tokens.one as string);
    try {
      const whoami = await call(client, 'system_whoami');
      assert.deepEqual([whoami.default_space, whoami.space_source], ['alpha', 'token']);
      const note = await call(client, 'live_note', { category: 'todo', content: 'over http' });
      assert.deepEqual([note.status, note.space_id], ['created', 'alpha']);
      assert.equal((await call(client, 'live_read', {})).total, 1);
    } finally {
      await client.close();
    }
  });

  it('any other token must give space_id, and the instructions say so', async () => {
    for (const name of ['two', 'every']) {
      const client = await connect(tokens[name] as string);
      try {
        const instructions = client.getInstructions() ?? '';
        assert.match(instructions, /Give project on every call, your workspace's git remote \(`git remote get-url origin` prints it\), or space_id/, name);
        assert.doesNotMatch(instructions, /Leave space_id empty/, name);
        const whoami = await call(client, 'system_whoami');
        assert.equal(whoami.default_space, undefined, name);
        assert.equal(whoami.space_source, 'none', name);
        const refused = await call(client, 'live_note', { category: 'todo', content: 'where?' });
        assert.equal(refused.code, 'invalid_input', name);
        assert.match(String(refused.hint), /space_id/, name);
        assert.equal((await call(client, 'live_note', { space_id: 'beta', category: 'todo', content: 'named' })).status, 'created', name);
      } finally {
        await client.close();
      }
    }
    assert.deepEqual((await readdir(tmp.dir)).filter((name) => !name.startsWith('_')).sort(), ['alpha', 'beta'], 'no space from the server folder or the pin');
  });
});
