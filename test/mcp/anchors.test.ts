/**
 * Anchors through the MCP tools, the way an agent meets them: the binary's stdio server run in process
 * (its real composition: the default space from the folder it runs in, its checkout found there), over
 * a real git repository. A note that cites code is written with its anchors; a reader in another clone
 * of the same repository, at a later commit, reads the same note with another state. A named anchor
 * that is no path of the repository is refused and nothing is written. The CLI as a process: `live-mem
 * note` anchors from the folder it runs in, `live-mem anchors` lists the states in its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';
import { tempDir } from '../helpers/tmp.js';

const CLIENT = `export async function retryRequest(url: string) {
  for (let i = 0; i < 3; i++) {
    const answer = await fetch(url);
    if (answer.ok) return answer;
  }
  throw new Error('gave up');
}
`;

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  });

type Note = { content: string; anchors?: Array<{ path: string; state: string; detail: string; symbol?: string; lines?: number[] }> };

describe('anchors through the MCP tools', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let writerDir: string;
  let readerDir: string;
  let env: Record<string, string>;
  before(async () => {
    home = await tempDir();
    const origin = path.join(home.dir, 'origin.git');
    writerDir = path.join(home.dir, 'writer');
    readerDir = path.join(home.dir, 'reader');
    git(home.dir, 'init', '-q', '--bare', '-b', 'main', origin);
    await mkdir(path.join(writerDir, 'src/net'), { recursive: true });
    git(writerDir, 'init', '-q', '-b', 'main');
    git(writerDir, 'remote', 'add', 'origin', 'git@github.com:acme/webapp.git');
    await writeFile(path.join(writerDir, 'src/net/client.ts'), CLIENT);
    git(writerDir, 'add', '.');
    git(writerDir, 'commit', '-q', '-m', 'first');
    git(writerDir, 'push', '-q', origin, 'main');
    git(home.dir, 'clone', '-q', origin, readerDir);
    git(readerDir, 'remote', 'set-url', 'origin', 'git@github.com:acme/webapp.git');
    // The reader's clone moves on: the function is rewritten there.
    await writeFile(path.join(readerDir, 'src/net/client.ts'), CLIENT.replace('i < 3', 'i < 5'));
    git(readerDir, 'commit', '-qam', 'five attempts');
    env = { HOME: home.dir, LIVE_MEM_HOME: path.join(home.dir, 'store'), LIVE_MEM_LOG_LEVEL: 'warn' };
  });
  after(() => home.remove());

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
    const nowhere = await cli(home.dir, 'anchors', 'cli-space');
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
});
