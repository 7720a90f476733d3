import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { parseJsonRpcStdout } from '../helpers/json-rpc-stream.js';
import { BIN, spawnServer, type SpawnedServer } from '../helpers/mcp-client.js';
import { AWS_ID } from '../helpers/secret-samples.js';
import { tempDir } from '../helpers/tmp.js';

describe('MCP over stdio: the built binary, driven by the SDK client', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: SpawnedServer;
  before(async () => {
    home = await tempDir();
    server = await spawnServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'tester' });
  });
  after(async () => {
    await server?.close();
    await home?.remove();
  });

  it('lists every tool with schemas, annotations and descriptions', async () => {
    const { tools } = await server.client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, [
      'admin_create_token',
      'admin_delete_token',
      'admin_list_tokens',
      'admin_revoke_token',
      'admin_update_token',
      'backup_create',
      'backup_delete',
      'backup_download',
      'backup_list',
      'backup_restore',
      'bank_compact',
      'bank_consolidate',
      'bank_consolidation_status',
      'bank_list',
      'bank_read',
      'bank_read_all',
      'history_list',
      'history_read',
      'live_note',
      'live_read',
      'live_search',
      'memory_context',
      'memory_search',
      'space_create',
      'space_delete',
      'space_export',
      'space_info',
      'space_list',
      'space_rules',
      'space_summary',
      'space_update',
      'summaries_list',
      'summaries_read',
      'summaries_update',
      'system_about',
      'system_health',
      'system_whoami',
    ]);
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 40, `${tool.name} description`);
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name} readOnlyHint`);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get('live_read')?.annotations?.readOnlyHint, true);
    assert.equal(byName.get('space_delete')?.annotations?.destructiveHint, true);
    assert.equal(byName.get('live_note')?.annotations?.readOnlyHint, false);
    assert.equal(server.client.getServerVersion()?.name, 'live-mem');
  });

  it('creates a space with the default rules, writes notes and reads them back newest first', async () => {
    const created = await server.call('space_create', { space_id: 'alpha', description: 'API rewrite' });
    assert.equal(created.status, 'created');
    assert.equal(created.space_id, 'alpha');
    const rules = await server.call('space_rules', { space_id: 'alpha' });
    for (const file of ['projectbrief.md', 'productContext.md', 'activeContext.md', 'systemPatterns.md', 'techContext.md', 'progress.md']) {
      assert.ok(String(rules.rules).includes(file), file);
    }
    const first = await server.call('live_note', { space_id: 'alpha', category: 'observation', content: 'The build passes', tags: 'build, ci' });
    assert.equal(first.status, 'created');
    assert.equal(first.agent, 'tester');
    assert.match(String(first.filename), /^\d{8}T\d{6}_tester_observation_[0-9a-z]{8}\.md$/);
    await server.call('live_note', { space_id: 'alpha', category: 'decision', content: 'Use S3', agent: 'cline' });
    const read = await server.call('live_read', { space_id: 'alpha' });
    assert.equal(read.total, 2);
    assert.equal(read.has_more, false);
    const notes = read.notes as Array<Record<string, unknown>>;
    assert.deepEqual(
      notes.map((n) => n.content),
      ['Use S3', 'The build passes'],
    );
    assert.deepEqual(notes[1]?.tags, ['build', 'ci']);
    const onlyCline = await server.call('live_read', { space_id: 'alpha', agent: 'cline' });
    assert.deepEqual(
      (onlyCline.notes as Array<Record<string, unknown>>).map((n) => n.agent),
      ['cline'],
    );
    const limited = await server.call('live_read', { space_id: 'alpha', limit: 1 });
    assert.equal(limited.total, 1);
    assert.equal(limited.has_more, true);
    const found = await server.call('live_search', { space_id: 'alpha', query: 'BUILD' });
    assert.deepEqual(
      (found.notes as Array<Record<string, unknown>>).map((n) => n.content),
      ['The build passes'],
    );
  });

  it('answers space_info, space_list, space_summary and the bank tools', async () => {
    const info = await server.call('space_info', { space_id: 'alpha' });
    assert.equal((info.live as Record<string, unknown>).notes_count, 2);
    assert.equal(info.synthesis_exists, false);
    const list = await server.call('space_list');
    assert.equal(list.total, 1);
    const bank = await server.call('bank_list', { space_id: 'alpha' });
    assert.equal(bank.file_count, 0);
    const all = await server.call('bank_read_all', { space_id: 'alpha' });
    assert.equal(all.truncated, false);
    const summary = await server.call('space_summary', { space_id: 'alpha' });
    assert.ok(String(summary.rules).startsWith('# Memory Bank Rules'));
    const missing = await server.call('bank_read', { space_id: 'alpha', filename: 'activeContext.md' });
    assert.equal(missing.status, 'not_found');
    const updated = await server.call('space_update', { space_id: 'alpha', owner: 'team-api' });
    assert.equal(updated.owner, 'team-api');
  });

  it('shows each bank file and the bank against their budgets (the output schemas validate them)', async () => {
    const rules = '# Rules\n\nBank budget: 6,000 tokens\n\n### progress.md\nHistory. Budget: 1,000 tokens\n\n### activeContext.md\nNow.\n';
    assert.equal((await server.call('space_create', { space_id: 'budgeted', rules })).status, 'created');
    // 4,200 characters are 1,200 tokens: over progress.md's own 1,000; activeContext.md takes the default 4,000.
    await writeFile(path.join(home.dir, 'budgeted', 'bank', 'progress.md'), `# Progress\n${'p'.repeat(4_189)}`);
    await writeFile(path.join(home.dir, 'budgeted', 'bank', 'activeContext.md'), 'a'.repeat(700));
    const expected = [
      { filename: 'activeContext.md', tokens: 200, budget_tokens: 4_000, over_budget: false },
      { filename: 'progress.md', tokens: 1_200, budget_tokens: 1_000, over_budget: true },
    ];
    const bank = await server.call('bank_list', { space_id: 'budgeted' });
    const files = bank.files as Array<Record<string, unknown>>;
    assert.deepEqual(
      files.map(({ filename, tokens, budget_tokens, over_budget }) => ({ filename, tokens, budget_tokens, over_budget })),
      expected,
    );
    assert.deepEqual([bank.total_tokens, bank.budget_tokens, bank.over_budget], [1_400, 6_000, false]);
    for (const tool of ['space_info', 'space_summary']) {
      const described = (await server.call(tool, { space_id: 'budgeted' })).bank as Record<string, unknown>;
      assert.deepEqual(described.file_budgets, expected, tool);
      assert.deepEqual([described.total_tokens, described.budget_tokens, described.over_budget], [1_400, 6_000, false], tool);
    }
    assert.equal((await server.call('space_delete', { space_id: 'budgeted', confirm: true })).status, 'deleted');
  });

  it('refuses bad input with a clear status and changes nothing', async () => {
    const before = await readdir(path.join(home.dir, 'alpha', 'live'));
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['live_note', { space_id: 'bad id!', category: 'observation', content: 'x' }, 'error', /invalid space_id/],
      ['live_note', { space_id: 'alpha', category: 'gossip', content: 'x' }, 'error', /unknown category/],
      ['live_note', { space_id: 'alpha', category: 'todo', content: '   ' }, 'error', /content is empty/],
      ['live_note', { space_id: 'alpha', category: 'todo', content: 'x'.repeat(100_001) }, 'error', /limit is 100000/],
      // A read never creates a space (a note would, for the local owner: test/e2e/first-note.test.ts).
      ['live_read', { space_id: 'ghost' }, 'not_found', /does not exist/],
      ['live_read', { space_id: 'alpha', limit: 0 }, 'error', /limit/],
      ['live_read', { space_id: 'alpha', limit: 5000 }, 'error', /limit/],
      ['live_read', { space_id: 'alpha', since: 'yesterday' }, 'error', /invalid since/],
      ['bank_read', { space_id: 'alpha', filename: '../_meta.json' }, 'error', /invalid bank filename/],
      ['bank_read', { space_id: 'alpha', filename: 'sub/file.md' }, 'error', /invalid bank filename/],
      ['space_create', { space_id: 'alpha' }, 'already_exists', /already exists/],
      ['space_delete', { space_id: 'alpha' }, 'error', /confirm=true/],
      ['space_info', { space_id: 'ghost' }, 'not_found', /does not exist/],
    ];
    for (const [tool, args, status, message] of cases) {
      const result = await server.call(tool, args);
      assert.equal(result.status, status, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
      assert.match(String(result.message), message);
    }
    assert.deepEqual(await readdir(path.join(home.dir, 'alpha', 'live')), before);
    assert.equal((await server.call('space_info', { space_id: 'alpha' })).status, 'ok');
  });

  it('deletes a space with confirm', async () => {
    await server.call('space_create', { space_id: 'doomed' });
    await server.call('live_note', { space_id: 'doomed', category: 'todo', content: 'x' });
    const deleted = await server.call('space_delete', { space_id: 'doomed', confirm: true });
    assert.equal(deleted.status, 'deleted');
    assert.equal((await server.call('space_info', { space_id: 'doomed' })).status, 'not_found');
    assert.deepEqual((await readdir(home.dir)).sort(), ['alpha']);
  });

  it('logs its banner to stderr', async () => {
    assert.match(server.stderr(), /serving MCP on stdio/);
  });

  it('keeps one spare temp file open ahead while it writes notes, and leaves none once it exits', async () => {
    const own = await tempDir();
    try {
      const writer = await spawnServer({ LIVE_MEM_HOME: own.dir });
      await writer.call('space_create', { space_id: 'ahead' });
      const live = path.join(own.dir, 'ahead', 'live');
      const temps = async () => (await readdir(live)).filter((name) => name.endsWith('.lmtmp'));
      const filenames: string[] = [];
      for (let i = 0; i < 4; i++)
        filenames.push(String((await writer.call('live_note', { space_id: 'ahead', category: 'progress', content: `step ${i}` })).filename));
      for (let i = 0; i < 100 && (await temps()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal((await temps()).length, 1, 'one spare, opened ahead for the next note');
      await writer.close();
      assert.deepEqual(await temps(), [], 'its exit removed the spare');
      assert.deepEqual((await readdir(live)).filter((name) => name.endsWith('.md')).sort(), filenames.sort());
    } finally {
      await own.remove();
    }
  });
});

/**
 * A raw session with the binary, no SDK transport between (it would hide stray bytes): each message
 * written as a line on its stdin, a request once the one before it is answered; then stdin is
 * closed and every byte of stdout is kept until the process exits.
 */
async function rawSession(env: Record<string, string>, messages: ReadonlyArray<{ id?: number }>): Promise<{ stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [BIN], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: 'pipe' });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // Which ids were answered, only to know when to write the next request: the bytes are checked once the process has exited.
  const answered = new Set<unknown>();
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let wake = () => {};
  child.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    const lines = (pending + decoder.write(chunk)).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        answered.add((JSON.parse(line) as { id?: unknown }).id);
      } catch {
        // Not JSON: parseJsonRpcStdout names it once the session is over.
      }
    }
    wake();
  });
  child.once('close', () => wake());
  const answerTo = async (id: number) => {
    while (!answered.has(id)) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited before answering ${id}: ${stderr}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  for (const message of messages) {
    child.stdin.write(`${JSON.stringify(message)}\n`);
    if (message.id !== undefined) await answerTo(message.id);
  }
  child.stdin.end();
  await exited;
  return { stdout: Buffer.concat(chunks), stderr };
}

describe('stdout carries JSON-RPC only', () => {
  const sent = new Set<string | number>([1, 2]);

  it('refuses a stream with anything besides newline-terminated JSON-RPC messages', () => {
    const ok = '{"jsonrpc":"2.0","id":1,"result":{}}\n';
    const planted = [
      ['a log line', `hello\n${ok}`],
      ['a trailing space', `{"jsonrpc":"2.0","id":1,"result":{}} \n`],
      ['a BOM', `\uFEFF${ok}`],
      ['a blank line', `${ok}\n`],
      ['a carriage return', ok.replace('\n', '\r\n')],
      ['no final newline', ok.trimEnd()],
      ['another protocol', '{"jsonrpc":"1.0","id":1,"result":{}}\n'],
      ['an id no request carried', '{"jsonrpc":"2.0","id":7,"result":{}}\n'],
      ['an id answered twice', ok + ok],
      ['bytes that are not UTF-8', Buffer.concat([Buffer.from(ok), Buffer.from([0xff, 0x0a])])],
    ] as const;
    for (const [what, stdout] of planted) assert.throws(() => parseJsonRpcStdout(typeof stdout === 'string' ? Buffer.from(stdout) : stdout, sent), Error, what);
    assert.equal(parseJsonRpcStdout(Buffer.from(`${ok}{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n`), sent).length, 2);
    assert.deepEqual(parseJsonRpcStdout(Buffer.alloc(0), sent), []);
  });

  it('writes nothing but JSON-RPC on stdout through a session with errors, a redaction, a consolidation without a model and a prompt', async () => {
    const home = await tempDir();
    try {
      const call = (id: number, name: string, args: Record<string, unknown>) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      const messages = [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        call(3, 'space_create', { space_id: 'pure' }),
        call(4, 'live_note', { space_id: 'pure', category: 'no-such-category', content: 'x' }),
        call(5, 'live_read', { space_id: 'missing' }),
        call(6, 'live_note', { space_id: 'pure', category: 'progress', content: `deploy key ${AWS_ID} in the config` }),
        call(7, 'bank_consolidate', { space_id: 'pure' }),
        { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'memory_start', arguments: { space_id: 'pure' } } },
        { jsonrpc: '2.0', id: 9, method: 'no/such/method' },
      ];
      const { stdout, stderr } = await rawSession({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'debug' }, messages);
      const ids = new Set(messages.flatMap((message) => ('id' in message && typeof message.id === 'number' ? [message.id] : [])));
      const answers = new Map(parseJsonRpcStdout(stdout, ids).map((message) => [message.id, message]));
      assert.deepEqual([...answers.keys()].sort(), [...ids].sort(), 'every request answered');
      type ToolResult = { isError?: boolean; structuredContent: { status: string } & Record<string, unknown> };
      const result = (id: number) => answers.get(id)?.result as ToolResult;
      const structured = (id: number) => result(id).structuredContent;
      assert.equal(structured(3).status, 'created');
      assert.equal(result(4).isError, true, 'an invalid argument is an error');
      assert.equal(structured(4).code, 'invalid_input');
      assert.equal(structured(5).status, 'not_found');
      assert.equal(structured(6).status, 'created');
      assert.ok(!stdout.toString().includes(AWS_ID), 'the secret is redacted');
      assert.equal(typeof structured(7).handle, 'string', 'no model: the consolidation is handed to the agent');
      assert.ok(answers.get(8)?.result, 'the prompt');
      assert.equal(answers.get(9)?.error?.code, -32601);
      assert.match(stderr, /serving MCP on stdio/);
    } finally {
      await home.remove();
    }
  });
});
