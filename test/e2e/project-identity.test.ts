/**
 * Another owner's repository of the same name is another project (issue 39 item 1, issue 40 item 2),
 * as an attack: acme's `webapp` space, made by the rule before (the bare repository name, no project
 * recorded), and a clone of mallory's `webapp` — through the built binary over stdio, started in the
 * clone as a client starts it, and through the session hook (`live-mem context . --hook`). The older
 * space is refused until a person decides (`live-mem space bind`), then used by its project alone.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { projectIdentity } from '../../src/config/project-identity.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN, spawnServer, type SpawnedServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const SECRET = 'acme prod database: failover runbook in vault path ops/db';

function git(cwd: string, ...args: string[]): void {
  const run = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
  assert.equal(run.status, 0, run.stderr);
}

describe("a clone of another owner's repository of the same name", () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let home: string;
  let store: string;
  const clones: Record<string, string> = {};
  const idOf = (name: string) => {
    const identity = projectIdentity(clones[name] as string, home);
    assert.ok('space_id' in identity);
    return identity.space_id;
  };

  const serve = async <T>(clone: string, run: (server: SpawnedServer) => Promise<T>) => {
    const server = await spawnServer({ HOME: home, LIVE_MEM_HOME: store, LIVE_MEM_LOG_LEVEL: 'warn' }, [], { cwd: clones[clone] as string });
    try {
      return await run(server);
    } finally {
      await server.close();
    }
  };
  const cli = (clone: string, ...args: string[]) =>
    execa(process.execPath, [BIN, '--home', store, ...args], {
      cwd: clones[clone] as string,
      env: { PATH: process.env.PATH ?? '', HOME: home },
      extendEnv: false,
      reject: false,
    });
  const hook = async (clone: string) => {
    const run = await cli(clone, 'context', '.', '--hook');
    assert.equal(run.exitCode, 0, run.stderr);
    return run.stdout;
  };

  before(async () => {
    tmp = await tempDir('live-mem-same-name');
    home = path.join(tmp.dir, 'home');
    store = path.join(tmp.dir, 'store');
    await mkdir(home, { recursive: true });
    for (const [name, remote] of [
      ['acme', 'git@github.com:acme/webapp.git'],
      ['acmeHttps', 'https://deploy:p@ss@github.com/Acme/WebApp'],
      ['mallory', 'https://evil.example.org/mallory/webapp.git?private_token=glpat-s3cret'],
      ['acmeApi', 'git@github.com:acme/api.git'],
      ['otherApi', 'git@github.com:other/api.git'],
    ] as const) {
      const clone = path.join(tmp.dir, name, name.endsWith('Api') ? 'api' : 'webapp');
      await mkdir(clone, { recursive: true });
      git(clone, 'init', '-q');
      git(clone, 'remote', 'add', 'origin', remote);
      clones[name] = clone;
    }
    // acme's space as the rule before made it: named `webapp`, recording no project.
    const core = createCore({ storage: createFsDriver(store) });
    await core.spaces.create(ownerCaller('alice'), { space_id: 'webapp' });
    await core.notes.write(ownerCaller('alice'), { space_id: 'webapp', category: 'decision', content: SECRET });
  });
  after(async () => {
    await tmp?.remove();
  });

  it("while the older `webapp` records no project, mallory's clone is refused, and says how to decide; the hook prints nothing", async () => {
    await serve('mallory', async (server) => {
      for (const [tool, args] of [
        ['live_read', {}],
        ['memory_context', {}],
        ['live_note', { category: 'todo', content: 'mallory was here' }],
      ] as const) {
        const refused = await server.call(tool, args);
        assert.equal(refused.code, 'conflict', `${tool}: ${JSON.stringify(refused)}`);
        assert.doesNotMatch(JSON.stringify(refused), /vault path/, tool);
        for (const said of [`now maps to the space '${idOf('mallory')}'`, "older space 'webapp'", 'live-mem space bind webapp', 'live-mem space bind --new'])
          assert.ok(String(refused.message).includes(said), `${said}: ${refused.message}`);
        assert.match(String(refused.hint), /Nothing was read or written/);
      }
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.space_source, 'none');
      assert.doesNotMatch(String(whoami.space_source_detail), /glpat|private_token/, 'no credentials in what the remote is shown as');
    });
    assert.equal(await hook('mallory'), '', 'nothing of acme reaches the session');
    const plain = await cli('mallory', 'context', '.');
    assert.equal(plain.exitCode, 1);
    assert.match(plain.stderr, /live-mem space bind webapp/);
  });

  it('`space bind webapp` in acme’s clone makes it acme’s: its ssh and https clones read it, mallory’s clone gets a space of its own', async () => {
    const refused = await cli('acme', 'space', 'bind', 'other-name');
    assert.equal(refused.exitCode, 2, 'invalid input');
    assert.match(refused.stderr, /not this project's space: its older space is 'webapp'/);
    const bound = await cli('acme', 'space', 'bind', 'webapp');
    assert.equal(bound.exitCode, 0, bound.stderr);
    const meta = JSON.parse(await readFile(path.join(store, 'webapp', '_meta.json'), 'utf8'));
    assert.equal(meta.project, 'github.com/acme/webapp');
    assert.equal(idOf('acme'), idOf('acmeHttps'), 'one project in ssh and https, whatever the case and credentials');

    for (const clone of ['acme', 'acmeHttps']) {
      await serve(clone, async (server) => {
        const read = await server.call('live_read', {});
        assert.equal(read.space_id, 'webapp', clone);
        assert.deepEqual(
          (read.notes as Array<{ content: string }>).map((note) => note.content),
          [SECRET],
        );
        const whoami = await server.call('system_whoami');
        assert.match(String(whoami.space_source_detail), /the older space 'webapp', bound to this project/);
        assert.doesNotMatch(String(whoami.space_source_detail), /p@ss|ss@|deploy/, 'no credentials');
      });
      assert.match(await hook(clone), /vault path/, `${clone}: the hook loads the project's own memory`);
    }

    await serve('mallory', async (server) => {
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.default_space, idOf('mallory'));
      const read = await server.call('live_read', {});
      assert.deepEqual([read.status, read.space_exists, read.notes], ['ok', false, []]);
      const note = await server.call('live_note', { category: 'todo', content: 'mallory was here' });
      assert.deepEqual([note.space_id, note.space_created], [idOf('mallory'), true]);
    });
    assert.doesNotMatch(await hook('mallory'), /vault path/);
    const malloryMeta = JSON.parse(await readFile(path.join(store, idOf('mallory'), '_meta.json'), 'utf8'));
    assert.equal(malloryMeta.project, 'evil.example.org/mallory/webapp', "a project's first note records its project");
  });

  it('acme/api and other/api never meet; `space bind --new` starts the project’s own space beside an undecided older one', async () => {
    const core = createCore({ storage: createFsDriver(store) });
    await core.spaces.create(ownerCaller('bob'), { space_id: 'api' });
    assert.notEqual(idOf('acmeApi'), idOf('otherApi'));
    await serve('acmeApi', async (server) => assert.equal((await server.call('live_read', {})).code, 'conflict'));

    const started = await cli('otherApi', 'space', 'bind', '--new');
    assert.equal(started.exitCode, 0, started.stderr);
    await serve('otherApi', async (server) => {
      const note = await server.call('live_note', { category: 'decision', content: 'other/api keeps its own notes' });
      assert.deepEqual([note.status, note.space_id], ['created', idOf('otherApi')]);
    });
    assert.equal((await cli('acmeApi', 'space', 'bind', 'api')).exitCode, 0);
    await serve('acmeApi', async (server) => {
      const read = await server.call('live_read', {});
      assert.equal(read.space_id, 'api');
      assert.deepEqual(read.notes, [], "other/api's note is not in acme/api's space");
    });
  });
});
