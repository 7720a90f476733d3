/**
 * `live-mem ingest` as a process: JSON lines from a file and from standard input, the MCP memory
 * server's memory.jsonl and a folder of Markdown notes (test/fixtures/ingest), dry runs, re-runs,
 * bad lines, tokens; then the binary's MCP server (in this process, SDK client) finds the notes by their
 * original times with live_read since/before and memory_search since/until.
 */
import assert from 'node:assert/strict';
import { cp, readdir, readFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { contentId } from '../../src/core/note/ingest-entry.js';
import { parseNoteFile } from '../../src/core/note/note-file.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/ingest/', import.meta.url));

describe('live-mem ingest, run as a process', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let home = '';
  const run = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: { LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'importer', ...options.env },
      extendEnv: false,
      reject: false,
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  const json = async (args: string[], options: { input?: string; env?: Record<string, string> } = {}) => {
    const result = await run([...args, '--json'], options);
    return { ...result, body: JSON.parse(result.stdout) as Record<string, unknown> };
  };
  const live = async (space: string) => (await readdir(path.join(home, space, 'live')).catch(() => [])).filter((name) => name.endsWith('.md')).sort();

  before(async () => {
    tmp = await tempDir();
    home = path.join(tmp.dir, 'home');
  });
  after(async () => tmp?.remove());

  it('writes a file of JSON lines with their times, then nothing on a re-run; a dry run writes nothing', async () => {
    const file = path.join(FIXTURES, 'history.jsonl');
    const dry = await run(['ingest', 'hist', file, '--dry-run']);
    assert.equal(dry.exitCode, 0, dry.stderr);
    assert.match(dry.stdout, /^DRY RUN, nothing written: 4 note\(s\) would be written, 0 already present · 4 entries · hist\n/);
    assert.match(dry.stdout, /from 2023-03-01T09:00:00Z to 2023-09-20T00:00:00Z · agents: alice, bob, carol/);
    assert.match(dry.stdout, /would be created with the default rules/);
    assert.deepEqual(await readdir(tmp.dir), [], 'a dry run made no store');

    const first = await json(['ingest', 'hist', file]);
    assert.equal(first.exitCode, 0, first.stderr);
    assert.equal(first.body.written, 4);
    assert.equal(first.body.space_created, true);
    assert.deepEqual(
      (await live('hist')).map((name) => name.slice(0, 15)),
      ['20230301T090000', '20230315T133000', '20230602T081500', '20230920T000000'],
    );

    const again = await run(['ingest', 'hist', file]);
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /^0 written, 4 already present · 4 entries · hist\n/);
    assert.equal((await live('hist')).length, 4);
  });

  it('reads standard input, and refuses a bad line by its number with nothing written (exit 2)', async () => {
    const good = JSON.stringify({ timestamp: '2024-05-01T12:00:00Z', agent: 'dave', category: 'todo', content: 'renew the TLS certificate', tags: 'ops' });
    const bad = [good, JSON.stringify({ timestamp: '2024-05-02T12:00:00Z', category: 'chore', content: 'x' }), '{"timestamp": 2024}'].join('\n');
    const refused = await run(['ingest', 'hist', '-'], { input: bad });
    assert.equal(refused.exitCode, 2);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /^live-mem: 2 of 3 entries refused, nothing was written: line 2: unknown category "chore".*; line 3: timestamp must be an ISO 8601 string/,
    );
    const asJson = await json(['ingest', 'hist', '-'], { input: bad });
    assert.deepEqual(
      (asJson.body.refused as Array<{ at: string }>).map((p) => p.at),
      ['line 2', 'line 3'],
    );
    assert.equal((await live('hist')).length, 4, 'nothing written');

    const piped = await json(['ingest', 'hist'], { input: `${good}\n` });
    assert.equal(piped.exitCode, 0, piped.stderr);
    assert.equal(piped.body.written, 1);
    assert.ok((await live('hist')).some((name) => name.startsWith('20240501T120000_dave_todo_')));
  });

  it('owner or admin only: a token with write permission is refused, an admin token accepted', async () => {
    const created = async (name: string, permissions: string) => String((await json(['token', 'create', name, '-p', permissions, '-s', 'hist'])).body.token);
    const writer = await created('writer', 'read,write');
    const admin = await created('lead', 'read,write,admin');
    const line = JSON.stringify({ timestamp: '2024-06-01T08:00:00Z', agent: 'erin', content: 'the on-call rota moved to Mondays' });
    const forbidden = await run(['ingest', 'hist', '-'], { input: line, env: { LIVE_MEM_TOKEN: writer } });
    assert.equal(forbidden.exitCode, 1);
    assert.match(forbidden.stderr, /lacks the 'admin' permission/);
    assert.ok(!(await live('hist')).some((name) => name.startsWith('20240601T080000')));
    const accepted = await json(['ingest', 'hist', '-'], { input: line, env: { LIVE_MEM_TOKEN: admin } });
    assert.equal(accepted.exitCode, 0, accepted.stderr);
    assert.deepEqual(accepted.body.agents, ['erin']);
    assert.ok((await live('hist')).some((name) => name.startsWith('20240601T080000_erin_observation_')));
  });

  it('names a note from its text as stored (masked, private removed), never from the text before; a re-run writes nothing', async () => {
    const raw = 'the db password=Autumn2023! <private>and the root one is Winter2022?</private>rotated on Friday';
    const line = JSON.stringify({ timestamp: '2024-04-01T10:00:00Z', agent: 'frank', category: 'progress', content: raw, tags: ['ops'] });
    const first = await json(['ingest', 'masked', '-'], { input: line });
    assert.equal(first.exitCode, 0, first.stderr);
    assert.equal(first.body.private_removed, 1);
    const [name] = await live('masked');
    const stored = parseNoteFile(await readFile(path.join(home, 'masked', 'live', name as string), 'utf8'));
    assert.ok(!stored.content.includes('Autumn2023!') && !stored.content.includes('Winter2022?'), stored.content);
    const id = (content: string) => contentId(new Date('2024-04-01T10:00:00Z'), 'frank', 'progress', content, ['ops']);
    assert.equal(name, `20240401T100000_frank_progress_00${id(stored.content)}.md`, 'the hash of the stored body');
    assert.notEqual(id(stored.content), id(raw), 'not the hash of the raw text');
    const again = await json(['ingest', 'masked', '-'], { input: line });
    assert.deepEqual([again.body.written, again.body.already_present], [0, 1]);
    assert.deepEqual(await live('masked'), [name]);
  });

  it('imports the MCP memory server’s memory.jsonl, at the file’s time or --timestamp', async () => {
    const memory = path.join(tmp.dir, 'memory.jsonl');
    await cp(path.join(FIXTURES, 'memory.jsonl'), memory);
    await utimes(memory, new Date('2024-02-01T12:00:00Z'), new Date('2024-02-01T12:00:00Z'));
    const dry = await json(['ingest', 'kg', memory, '--from', 'mcp-memory', '--dry-run']);
    assert.equal(dry.body.would_write, 3);
    assert.deepEqual(dry.body.time_range, { oldest: '2024-02-01T12:00:00Z', newest: '2024-02-01T12:00:00Z' });
    assert.deepEqual(await readdir(home).then((names) => names.includes('kg')), false);

    const written = await json(['ingest', 'kg', memory, '--from', 'mcp-memory']);
    assert.equal(written.body.written, 3, written.stderr);
    const names = await live('kg');
    assert.ok(
      names.every((name) => name.startsWith('20240201T120000_importer_observation_')),
      String(names),
    );
    const read = await json(['read', 'kg']);
    const alice = (read.body.notes as Array<{ content: string; tags: string[] }>).find((note) => note.tags.includes('Alice_Smith'));
    assert.deepEqual(alice?.tags, ['person', 'Alice_Smith']);
    assert.match(alice?.content ?? '', /Prefers Postgres\n\nRelations:\n- Alice_Smith owns Orders_Service/);

    const fromStdin = await run(['ingest', 'kg', '-', '--from', 'mcp-memory'], { input: '{"type":"entity","name":"x","entityType":"t","observations":[]}\n' });
    assert.equal(fromStdin.exitCode, 2);
    assert.match(fromStdin.stderr, /give --timestamp/);
    const stamped = await json(['ingest', 'kg', memory, '--from', 'mcp-memory', '--timestamp', '2023-01-01T00:00:00Z']);
    assert.equal(stamped.body.written, 3, 'another time, other notes');
    assert.equal((await live('kg')).filter((name) => name.startsWith('20230101T000000_')).length, 3);
  });

  it('imports a folder of Markdown notes with front-matter, the file’s time when it names none', async () => {
    const folder = path.join(tmp.dir, 'notes');
    await cp(path.join(FIXTURES, 'markdown'), folder, { recursive: true });
    await utimes(path.join(folder, 'sub', 'no-front-matter.md'), new Date('2021-07-04T09:30:00Z'), new Date('2021-07-04T09:30:00Z'));
    const dry = await json(['ingest', 'md', folder, '--from', 'markdown', '--dry-run']);
    assert.deepEqual([dry.body.would_write, dry.body.would_create_space], [3, true]);
    assert.ok(!(await readdir(home)).includes('md'), 'a dry run made no space and wrote nothing');
    const result = await json(['ingest', 'md', folder, '--from', 'markdown']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.body.written, 3, 'the hidden folder and the .txt file are not notes');
    assert.deepEqual(
      (await live('md')).map((name) => name.replace(/_[a-z0-9]{8}\.md$/, '')),
      ['20210704T093000_importer_observation', '20221105T100000_erin_observation', '20230410T160000_dana_insight'],
    );
    const read = await json(['read', 'md', '--from', 'dana']);
    const [retro] = read.body.notes as Array<{ content: string; tags: string[] }>;
    assert.deepEqual(retro?.tags, ['retro', 'process']);
    assert.equal(retro?.content, '# Sprint retro\n\nShorter sprints gave us fewer half-finished branches.');
    assert.match((await run(['ingest', 'md', folder, '--from', 'markdown'])).stdout, /^0 written, 3 already present/);
    const notAFolder = await run(['ingest', 'md', path.join(folder, 'readme.txt'), '--from', 'markdown']);
    assert.equal(notAFolder.exitCode, 2);
    assert.match(notAFolder.stderr, /is not a folder/);
  });

  it('over MCP, live_read since/before and memory_search since/until find the notes by their original times', async () => {
    const server = await inProcessServer({ LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'reader' });
    try {
      await server.call('live_note', { space_id: 'hist', category: 'progress', content: 'today: the warehouse export runs hourly' });
      const times = (result: Record<string, unknown>) => (result.notes as Array<{ timestamp: string }>).map((note) => note.timestamp);
      const since = await server.call('live_read', { space_id: 'hist', since: '2023-06-01T00:00:00Z', limit: 3 });
      assert.deepEqual(times(since).slice(1), ['2024-06-01T08:00:00Z', '2024-05-01T12:00:00Z']);
      assert.equal(since.has_more, true);
      const older = await server.call('live_read', { space_id: 'hist', before: (since.notes as Array<{ filename: string }>)[2]!.filename });
      assert.deepEqual(times(older), ['2023-09-20T00:00:00Z', '2023-06-02T08:15:00Z', '2023-03-15T13:30:00Z', '2023-03-01T09:00:00Z']);

      const hits = async (args: Record<string, unknown>) =>
        ((await server.call('memory_search', { space_id: 'hist', query: 'warehouse export', ...args })).results as Array<{ timestamp: string }>)
          .map((hit) => hit.timestamp)
          .sort();
      assert.equal((await hits({})).length, 3);
      assert.deepEqual(await hits({ since: '2023-01-01T00:00:00Z', until: '2023-12-31T23:59:59Z' }), ['2023-03-15T13:30:00Z', '2023-09-20T00:00:00Z']);
      assert.deepEqual(await hits({ until: '2023-06-01T00:00:00Z' }), ['2023-03-15T13:30:00Z']);

      // Another process ingests while the server runs: its listings and its index catch up with the old note.
      const late = JSON.stringify({ timestamp: '2023-04-01T07:00:00Z', agent: 'frank', content: 'the warehouse export failed on April 1st' });
      assert.equal((await run(['ingest', 'hist', '-'], { input: late })).exitCode, 0);
      const april = await server.call('live_read', { space_id: 'hist', before: (older.notes as Array<{ filename: string }>)[1]!.filename });
      assert.deepEqual(times(april), ['2023-04-01T07:00:00Z', '2023-03-15T13:30:00Z', '2023-03-01T09:00:00Z']);
      assert.deepEqual(await hits({ since: '2023-03-20T00:00:00Z', until: '2023-05-01T00:00:00Z' }), ['2023-04-01T07:00:00Z']);
    } finally {
      await server.close();
    }
  });
});
