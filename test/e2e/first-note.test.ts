/**
 * No dead end on a new store (issue 20): an agent served the `agent` profile writes its first note
 * with no other step, into its project's default space; reads never create a space; with tokens in
 * use a note to a missing space creates nothing; and what the server tells the model (instructions,
 * prompts, error hints) names only tools it offers. The binary's server, run in the project's folder
 * (in this process; two binaries over stdio for the race), the SDK client.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, spawnServer, type TestServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const TOOL_NAMES = new Set(allTools.map((tool) => tool.name));

/** The tool names a text mentions. */
const toolsNamed = (text: string): string[] => [...new Set(text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? [])].filter((word) => TOOL_NAMES.has(word));

const textOf = (prompt: { messages: Array<{ content: { type: string; text?: string } }> }): string =>
  prompt.messages.map((message) => message.content.text ?? '').join('\n');

const notesIn = async (home: string, spaceId: string): Promise<string[]> =>
  (await readdir(path.join(home, spaceId, 'live'))).filter((name) => name.endsWith('.md'));

async function withServer<T>(env: Record<string, string>, cwd: string, run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await inProcessServer({ LIVE_MEM_LOG_LEVEL: 'warn', ...env }, { cwd });
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

describe('the first note on a new store', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let project: string;
  before(async () => {
    tmp = await tempDir();
    // Not a git repository: the default space is the folder's name, made a space id.
    project = path.join(tmp.dir, 'My Project.v2');
    await mkdir(project);
  });
  after(async () => {
    await tmp?.remove();
  });

  it('agent profile: the first note creates the default space, and reads it back with no other step', async () => {
    const home = path.join(tmp.dir, 'agent-home');
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOOLS: 'agent', LIVE_MEM_AGENT: 'claude' }, project, async (server) => {
      const offered = new Set((await server.client.listTools()).tools.map((tool) => tool.name));
      assert.ok(!offered.has('space_create'), 'the agent profile offers no space_create');
      assert.equal((await server.call('system_whoami')).default_space, 'My-Project-v2');

      // Before the first note, a read of the default space answers empty (issue 29), says the first note makes it, and creates nothing.
      const read = await server.call('live_read', {});
      assert.deepEqual([read.status, read.space_id, read.total, read.space_exists], ['ok', 'My-Project-v2', 0, false]);
      assert.match(String(read.message), /does not exist yet: .*first note/);
      assert.deepEqual(await readdir(home).catch(() => []), [], 'a read created nothing');

      const first = await server.call('live_note', { category: 'decision', content: 'we use the default space' });
      assert.equal(first.status, 'created');
      assert.equal(first.space_id, 'My-Project-v2');
      assert.equal(first.space_created, true);
      const second = await server.call('live_note', { space_id: '', category: 'progress', content: 'second note' });
      assert.equal(second.status, 'created');
      assert.equal(second.space_created, undefined, 'only the note that made the space says so');

      const back = await server.call('live_read', {});
      assert.equal(back.space_id, 'My-Project-v2');
      assert.deepEqual(
        (back.notes as Array<{ content: string }>).map((note) => note.content),
        ['second note', 'we use the default space'],
      );
      assert.equal((await server.call('live_search', { query: 'DEFAULT' })).total, 1);
      const summary = await server.call('space_summary', {});
      assert.equal(summary.status, 'ok');
      assert.match(String(summary.rules), /activeContext\.md/, 'created with the default rules');
      const info = JSON.parse(await (await import('node:fs/promises')).readFile(path.join(home, 'My-Project-v2', '_meta.json'), 'utf8'));
      assert.equal(info.owner, 'claude');
      assert.match(info.description, /first note/);
    });
  });

  it('agent profile: instructions, memory_start and error hints name only offered tools', async () => {
    const home = path.join(tmp.dir, 'hints-home');
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOOLS: 'agent' }, project, async (server) => {
      const offered = new Set((await server.client.listTools()).tools.map((tool) => tool.name));
      const hidden = (text: string) => toolsNamed(text).filter((name) => !offered.has(name));

      const instructions = server.client.getInstructions() ?? '';
      assert.match(instructions, /live_note/);
      assert.deepEqual(hidden(instructions), [], 'instructions');

      const start = textOf(await server.client.getPrompt({ name: 'memory_start', arguments: {} }));
      assert.match(start, /the live-mem space "My-Project-v2"/, 'the default space');
      assert.match(start, /does not exist yet: write a note to it to create it \(live_note/);
      assert.deepEqual(hidden(start), [], 'memory_start');
      const wrapUp = textOf(await server.client.getPrompt({ name: 'memory_wrap_up', arguments: { space: 'ghost' } }));
      assert.deepEqual(hidden(wrapUp), [], 'memory_wrap_up');

      for (const [tool, args] of [
        ['bank_read', { space_id: 'ghost', filename: 'activeContext.md' }],
        ['memory_context', { space_id: 'ghost' }],
        ['live_search', { space_id: 'ghost', query: 'x' }],
      ] as const) {
        const result = await server.call(tool, args);
        assert.equal(result.status, 'not_found', tool);
        assert.ok(result.hint, tool);
        assert.deepEqual(hidden(String(result.hint)), [], `${tool}: ${result.hint}`);
      }
      // The same hint under every tool names a tool the agent profile hides (space_create).
      await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_AUTO_CREATE_SPACES: 'off' }, project, async (all) => {
        assert.match(String((await all.call('live_read', { space_id: 'ghost' })).hint), /space_create/);
      });
      const off = await inProcessServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOOLS: 'agent', LIVE_MEM_AUTO_CREATE_SPACES: 'off' }, { cwd: project });
      try {
        const refused = await off.call('live_note', { space_id: 'ghost', category: 'todo', content: 'x' });
        assert.equal(refused.status, 'not_found');
        assert.deepEqual(hidden(String(refused.hint)), [], String(refused.hint));
        assert.match(String(refused.hint), /live-mem space create ghost/);
        assert.deepEqual(hidden(textOf(await off.client.getPrompt({ name: 'memory_start', arguments: { space: 'ghost' } }))), []);
      } finally {
        await off.close();
      }
      assert.deepEqual(await readdir(home).catch(() => []), [], 'nothing was created');
    });
  });

  it('tools that change or remove a space need it named', async () => {
    const home = path.join(tmp.dir, 'named-home');
    await withServer({ LIVE_MEM_HOME: home }, project, async (server) => {
      const result = await server.client.callTool({ name: 'space_delete', arguments: { confirm: true } });
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /space_id/);
    });
  });

  it('with tokens in use, a note to a missing space is not_found and creates nothing (unless auto-create is on)', async () => {
    const home = path.join(tmp.dir, 'token-home');
    const core = createCore({ storage: createFsDriver(home) });
    const { token } = await core.auth.create(ownerCaller('owner'), { name: 'writer', permissions: 'write', space_ids: '*' });
    const note = { space_id: 'ghost', category: 'todo', content: 'first' };
    for (const env of [{ LIVE_MEM_AUTH: 'required' }, { LIVE_MEM_AUTH: 'optional' }]) {
      await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOOLS: 'agent', LIVE_MEM_TOKEN: token, ...env }, project, async (server) => {
        const refused = await server.call('live_note', note);
        assert.equal(refused.status, 'not_found', JSON.stringify(env));
        assert.doesNotMatch(String(refused.hint), /create it \(live_note/, 'no advice that cannot work');
      });
    }
    assert.ok(!(await readdir(home)).includes('ghost'), 'nothing was created');
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_TOKEN: token, LIVE_MEM_AUTH: 'required', LIVE_MEM_AUTO_CREATE_SPACES: 'on' }, project, async (server) => {
      const created = await server.call('live_note', note);
      assert.equal(created.status, 'created');
      assert.equal(created.space_created, true);
    });
    assert.equal((await notesIn(home, 'ghost')).length, 1);
  });

  it('two processes writing their first notes at once: one space, both notes', async () => {
    const home = path.join(tmp.dir, 'race-home');
    const servers = await Promise.all([0, 1].map(() => spawnServer({ LIVE_MEM_HOME: home, LIVE_MEM_SPACE: 'raced', LIVE_MEM_LOG_LEVEL: 'warn' })));
    try {
      for (let round = 0; round < 3; round++) {
        const space_id = `raced-${round}`;
        const results = await Promise.all(servers.map((server, i) => server.call('live_note', { space_id, category: 'progress', content: `from ${i}` })));
        assert.deepEqual(
          results.map((result) => result.status),
          ['created', 'created'],
        );
        assert.equal(results.filter((result) => result.space_created === true).length, 1, 'one of them made the space');
        assert.equal((await notesIn(home, space_id)).length, 2);
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});

describe('the default space', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    tmp = await tempDir();
  });
  after(async () => {
    await tmp?.remove();
  });

  it('is LIVE_MEM_SPACE when set', async () => {
    const home = path.join(tmp.dir, 'home-env');
    await withServer({ LIVE_MEM_HOME: home, LIVE_MEM_SPACE: 'team-notes' }, tmp.dir, async (server) => {
      assert.equal((await server.call('system_whoami')).default_space, 'team-notes');
      assert.equal((await server.call('live_note', { category: 'todo', content: 'x' })).space_id, 'team-notes');
    });
    assert.equal((await notesIn(home, 'team-notes')).length, 1);
  });

  it("is the git repository's folder name, from anywhere inside it", async () => {
    const repo = path.join(tmp.dir, 'shop_api');
    const inside = path.join(repo, 'src', 'orders');
    await mkdir(inside, { recursive: true });
    const git = spawnSync('git', ['init', '-q', repo], { encoding: 'utf8' });
    assert.equal(git.status, 0, git.stderr);
    const home = path.join(tmp.dir, 'home-git');
    await withServer({ LIVE_MEM_HOME: home }, inside, async (server) => {
      assert.equal((await server.call('system_whoami')).default_space, 'shop_api');
      const note = await server.call('live_note', { category: 'decision', content: 'orders go through the queue' });
      assert.equal(note.space_id, 'shop_api');
      assert.equal((await server.call('memory_context', {})).space_id, 'shop_api');
      assert.equal((await server.call('bank_read_all', {})).status, 'ok');
    });
  });

  it('refuses a LIVE_MEM_SPACE or LIVE_MEM_AUTO_CREATE_SPACES it cannot use (exit 2, nothing served)', () => {
    for (const [name, value, message] of [
      ['LIVE_MEM_SPACE', '../etc', /LIVE_MEM_SPACE must be a space id/],
      ['LIVE_MEM_AUTO_CREATE_SPACES', 'yes', /LIVE_MEM_AUTO_CREATE_SPACES must be one of auto, on, off/],
    ] as const) {
      const run = spawnSync(process.execPath, [BIN], {
        env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LIVE_MEM_HOME: path.join(tmp.dir, 'bad'), [name]: value },
        input: '',
        encoding: 'utf8',
      });
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, message);
    }
  });
});
