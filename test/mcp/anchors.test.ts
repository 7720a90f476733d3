/**
 * Anchors through the MCP tools, the way an agent meets them: the binary's stdio server run in process
 * (its real composition: the default space from the folder it runs in, its checkout found there), over
 * a real git repository. A note that cites code is written with its anchors; a reader in another clone
 * of the same repository, at a later commit, reads the same note with another state. A named anchor
 * that is no path of the repository is refused and nothing is written. The CLI as a process: `live-mem
 * note` anchors from the folder it runs in, `live-mem anchors` lists the states in its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { git, type TwoClones, twoClones } from '../helpers/git-project.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';

type Note = { content: string; anchors?: Array<{ path: string; state: string; detail: string; symbol?: string; lines?: number[] }> };

describe('anchors through the MCP tools', () => {
  let fixture: TwoClones;
  let writerDir: string;
  let readerDir: string;
  let env: Record<string, string>;
  before(async () => {
    fixture = await twoClones();
    ({ writerDir, readerDir, env } = fixture);
  });
  after(() => fixture.remove());

  it('writes a note with the anchors its text and its writer name, and reads them fresh where they were written', async () => {
    const server = await inProcessServer(env, { cwd: writerDir });
    try {
      const written = await server.call('live_note', {
        category: 'insight',
        content: 'Retries are handled by `retryRequest` in src/net/client.ts, three attempts.',
        anchors: 'src/net/client.ts:3-4',
      });
      assert.equal(written.status, 'created', JSON.stringify(written));
      const anchors = written.anchors as Array<{ path: string; lines?: number[]; symbol?: string; commit: string; hash: string }>;
      assert.deepEqual(
        anchors.map((a) => `${a.path}${a.lines ? `:${a.lines.join('-')}` : ''}${a.symbol ? `#${a.symbol}` : ''}`),
        ['src/net/client.ts:3-4', 'src/net/client.ts#retryRequest'],
      );
      assert.equal(anchors[0]?.commit, git(writerDir, 'rev-parse', 'HEAD').trim());
      const read = (await server.call('live_read', {})) as unknown as { notes: Note[] };
      assert.deepEqual(
        read.notes[0]?.anchors?.map((a) => a.state),
        ['fresh', 'fresh'],
      );
    } finally {
      await server.close();
    }
  });

  it('a reader in another clone, at a later commit, reads the same note as drifted, and says how much (live_search, memory_search)', async () => {
    const server = await inProcessServer(env, { cwd: readerDir });
    try {
      const read = (await server.call('live_search', { query: 'retries' })) as unknown as { notes: Note[] };
      const anchors = read.notes[0]?.anchors ?? [];
      assert.deepEqual(
        anchors.map((a) => a.state),
        ['fresh', 'drifted'],
        JSON.stringify(anchors),
      );
      assert.match(anchors[1]?.detail ?? '', /1 of 7 cited lines differ/);
      const found = (await server.call('memory_search', { query: 'retries attempts' })) as unknown as { results: Note[] };
      assert.deepEqual(
        found.results[0]?.anchors?.map((a) => a.state),
        ['fresh', 'drifted'],
        'memory_search shows the same states',
      );
    } finally {
      await server.close();
    }
  });

  it('refuses a named anchor that is no path of the repository, and writes nothing', async () => {
    const server = await inProcessServer(env, { cwd: writerDir });
    try {
      const before = ((await server.call('live_read', {})) as unknown as { notes: Note[] }).notes.length;
      for (const anchors of ['../secret.txt', 'src/net/none.ts:1']) {
        const refused = await server.call('live_note', { category: 'insight', content: 'a note', anchors });
        assert.equal(refused.status, 'error', JSON.stringify(refused));
        assert.match(String(refused.message), /anchors:/);
      }
      assert.equal(((await server.call('live_read', {})) as unknown as { notes: Note[] }).notes.length, before);
    } finally {
      await server.close();
    }
  });

  it('the CLI: `note` anchors from its folder, `anchors` shows the states in its own', async () => {
    const cli = (cwd: string, ...args: string[]) =>
      execa(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, extendEnv: false, reject: false });
    const written = await cli(writerDir, 'note', 'cli-space', '--json', '-c', 'decision', 'the loop is in src/net/client.ts:2-5');
    assert.equal(written.exitCode, 0, written.stderr);
    assert.match(written.stdout, /"anchors"/);
    const here = await cli(writerDir, 'anchors', 'cli-space');
    assert.equal(here.exitCode, 0, here.stderr);
    assert.match(here.stdout, /src\/net\/client\.ts:2-5\s+fresh/);
    const there = await cli(readerDir, 'anchors', 'cli-space');
    assert.match(there.stdout, /src\/net\/client\.ts:2-5\s+drifted\s+lines 2-5 changed: 1 of 4 cited lines differ/);
    const nowhere = await cli(fixture.home, 'anchors', 'cli-space');
    assert.match(nowhere.stdout, /checkout: none/);
    assert.match(nowhere.stdout, /unverifiable/);
  });

  it('anchors go with their note into history: a consolidated note found by memory_search still shows them', async () => {
    const server = await inProcessServer(env, { cwd: writerDir });
    try {
      const pkg = (await server.call('bank_consolidate', {})) as unknown as { handle: string; prompt: string };
      const done = await server.call('bank_consolidate', { handle: pkg.handle, plan: writePlan(pkg) });
      assert.equal(done.status, 'ok', JSON.stringify(done));
      assert.equal(((await server.call('live_read', {})) as unknown as { notes: Note[] }).notes.length, 0);
      const found = (await server.call('memory_search', { query: 'retries attempts', sources: ['history'] })) as unknown as { results: Note[] };
      assert.deepEqual(
        found.results[0]?.anchors?.map((a) => a.state),
        ['fresh', 'fresh'],
      );
    } finally {
      await server.close();
    }
  });

  it('memory_context labels each note by its code, the notes shown beside a hit included; a note whose code is as cited comes first', async () => {
    const writer = await inProcessServer(env, { cwd: writerDir });
    try {
      await writer.call('live_note', { category: 'observation', content: 'When retries give up, src/net/client.ts:6 throws.' });
    } finally {
      await writer.close();
    }
    const reader = await inProcessServer(env, { cwd: readerDir });
    try {
      const context = await reader.call('memory_context', { query: 'retries' });
      const text = String(context.text);
      const fresh = text.indexOf('code fresh');
      const drifted = text.search(/code drifted src\/net\/client\.ts#retryRequest: the block of retryRequest changed: 1 of 7 cited lines differ/);
      // The consolidated note is shown beside the hit (its neighbour), labelled all the same.
      assert.ok(fresh > 0 && drifted > 0, text);
      assert.ok(fresh < drifted, 'the note whose code is as cited comes first');
    } finally {
      await reader.close();
    }
  });

  it('memory_context ranks a hit whose code drifted after one whose code is as cited, though search ranks it first', async () => {
    const space = 'ranking';
    const writer = await inProcessServer(env, { cwd: writerDir });
    try {
      // The drifted note matches the query best; three unrelated notes apart from it, so that neither hit is the other's neighbour.
      await writer.call('live_note', {
        space_id: space,
        category: 'insight',
        content: 'Backoff backoff backoff: `retryRequest` in src/net/client.ts has no backoff.',
      });
      for (const i of [1, 2, 3, 4, 5]) await writer.call('live_note', { space_id: space, category: 'observation', content: `Unrelated chore number ${i}.` });
      await writer.call('live_note', { space_id: space, category: 'decision', content: 'A backoff would wrap the throw at src/net/client.ts:6.' });
    } finally {
      await writer.close();
    }
    const reader = await inProcessServer(env, { cwd: readerDir });
    try {
      const found = (await reader.call('memory_search', { space_id: space, query: 'backoff', sources: ['live'] })) as unknown as {
        results: Array<Note & { ref: string }>;
      };
      assert.deepEqual(
        found.results.slice(0, 2).map((hit) => hit.anchors?.map((a) => a.state).join()),
        ['drifted', 'fresh'],
        'search alone ranks the drifted note first',
      );
      const text = String((await reader.call('memory_context', { space_id: space, query: 'backoff' })).text);
      const hits = [...text.matchAll(/^- \[live \S+; code (\w+)/gm)].map((match) => match[1]);
      assert.deepEqual(hits, ['fresh', 'drifted'], text);
    } finally {
      await reader.close();
    }
  });
});
