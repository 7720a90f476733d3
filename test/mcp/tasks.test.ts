/**
 * Long work as MCP tasks (2026-07-28's tasks extension, src/mcp/tasks.ts): a client that declares the
 * extension on its request gets bank_consolidate (and summaries_update) on live-mem's own model as a
 * task handle at once, follows it with tasks/get — from any replica sharing the store — until it is
 * completed with the tool's result; a client that does not declare it gets the result in the call, as
 * before. In process: the SDK's HTTP entry (createMcpHandler) driven through its fetch function, by the
 * extension's own requester (@modelcontextprotocol/ext-tasks' client session over the SDK's v2 client,
 * its raw dispatch posting to the entry, as that package asks of a 2026-07-28 host) and by raw JSON-RPC
 * for the details; the model is the scripted OpenAI-compatible server on 127.0.0.1 through the real
 * `openai` client, held until the test lets it answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, type RawClientDispatch, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { type Caller, ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { spaceKeys } from '../../src/core/layout.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { TASKS_EXTENSION } from '../../src/mcp/tasks.js';
import { listKeys } from '../../src/storage/list.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { writePlan } from '../helpers/plan-writer.js';
import { type ScriptedLlm, startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep } from '../helpers/wait.js';

const owner = ownerCaller('owner');
const stranger: Caller = { agent: 'stranger', permissions: new Set(['read', 'write']), spaces: new Set(['other']), canChooseAgent: false };
const MODERN = '2026-07-28';

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string } };
type Entry = { fetch(request: Request): Promise<Response> };
const CLIENT_INFO = { name: 'tasks-test', version: '0' };
const TAKES_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

/** One JSON-RPC request posted to `handler` as a 2026-07-28 client posts it (the routing headers included). */
async function post(handler: Entry, message: { method: string; params?: Record<string, unknown>; id?: unknown }): Promise<Answer> {
  const params = message.params ?? {};
  const name = typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : undefined;
  const response = await handler.fetch(
    new Request('http://test.local/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': message.method,
        ...(name ? { 'mcp-name': name } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: message.id ?? 1, ...message }),
    }),
  );
  const text = await response.text();
  return JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text)) as Answer;
}

/** One 2026-07-28 request to `handler`, declaring the tasks extension or not. */
const send = (handler: Entry, method: string, params: Record<string, unknown>, tasks: boolean): Promise<Answer> =>
  post(handler, {
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
        'io.modelcontextprotocol/clientCapabilities': tasks ? TAKES_TASKS : {},
      },
    },
  });

/** The extension's own requester over the SDK's v2 client, for `handler`: its 2026-07-28 requests go out raw (the SDK's codecs refuse task traffic). */
async function taskSession(handler: Entry) {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' }, capabilities: TAKES_TASKS });
  await client.connect(new StreamableHTTPClientTransport(new URL('http://test.local/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }));
  const rawDispatch: RawClientDispatch = async (request) => (await post(handler, request as { method: string })) as never;
  const session = createTaskSessionFromClient(client, {
    endpointId: 'tasks-test',
    rawDispatch,
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: TAKES_TASKS },
  });
  return {
    session,
    close: async () => {
      await session.close();
      await client.close();
    },
  };
}

/** tasks/get until the task is completed (20 s at most): its DetailedTask. */
async function completed(handler: { fetch(request: Request): Promise<Response> }, taskId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const now = await send(handler, 'tasks/get', { taskId }, true);
    if (now.result?.status === 'completed') return now.result;
    if (Date.now() > deadline) assert.fail(`task ${taskId} not completed: ${JSON.stringify(now)}`);
    await sleep(50);
  }
}

describe('long work as MCP tasks (2026-07-28 tasks extension)', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let storage: StorageDriver;
  let llm: ScriptedLlm;
  let release: () => void = () => undefined;
  const handlers: Array<ReturnType<typeof createMcpHandler>> = [];
  const cores: Array<ReturnType<typeof createCore>> = [];

  /** An entry over the shared store with a core of its own (a replica), answering for `caller`. */
  const replica = (caller: Caller) => {
    const core = createCore({ storage, llm: llm.client() });
    cores.push(core);
    const handler = createMcpHandler(
      () => createMcpServer({ core, version: '0.0.0-test', logger: core.context.logger, resolveCaller: () => caller, era: 'modern' }),
      { legacy: 'reject' },
    );
    handlers.push(handler);
    return handler;
  };

  before(async () => {
    home = await tempDir();
    storage = createFsDriver(home.dir);
    const gate = new Promise<void>((resolve) => (release = resolve));
    const plan = {
      dynamic: (messages: Array<{ role: string; content: string }>) => writePlan({ prompt: messages.find((m) => m.role === 'user')?.content ?? '' }),
    };
    // The first plan waits for the test; every later one is written at once.
    llm = await startScriptedLlm([{ until: gate, then: plan }, ...Array.from({ length: 20 }, () => plan)]);
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 5; i++) await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: `task decision ${i}` });
  });
  after(async () => {
    release();
    await Promise.all(handlers.map((handler) => handler.close()));
    await Promise.all(cores.flatMap((core) => [core.jobs.idle(), core.idle()]));
    await llm?.close();
    await home?.remove();
  });

  it('server/discover offers the extension', async () => {
    const answer = await send(replica(owner), 'server/discover', {}, true);
    assert.deepEqual((answer.result?.capabilities as { extensions?: unknown } | undefined)?.extensions, { [TASKS_EXTENSION]: {} }, JSON.stringify(answer));
  });

  it('a consolidation is a task: working, followed from another replica, completed with the tool result', async () => {
    const first = replica(owner);
    const second = replica(owner);
    const created = await send(first, 'tools/call', { name: 'bank_consolidate', arguments: { space_id: 'proj' } }, true);
    const task = created.result ?? {};
    assert.equal(task.resultType, 'task', JSON.stringify(created));
    assert.equal(task.status, 'working');
    const taskId = String(task.taskId);
    assert.match(taskId, /^bank_consolidate\/proj\/\d{8}T\d{6}-[0-9a-z]{6}$/);
    assert.ok(Number(task.pollIntervalMs) > 0);
    // Durable before the handle was answered: the other replica reads it, still working (the model is held).
    const seen = await send(second, 'tasks/get', { taskId }, true);
    assert.equal(seen.result?.status, 'working', JSON.stringify(seen));
    assert.equal(seen.result?.resultType, 'complete');
    const cancel = await send(second, 'tasks/cancel', { taskId }, true);
    assert.equal(cancel.result?.resultType, 'complete', `acknowledged: ${JSON.stringify(cancel)}`);
    release();
    const done = await completed(second, taskId);
    const result = done.result as { structuredContent: Record<string, unknown>; isError?: boolean };
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(result.structuredContent.status, 'ok');
    assert.equal(result.structuredContent.notes_processed, 5);
    assert.equal((await listKeys(storage, spaceKeys('proj').live)).filter((key) => key.endsWith('.md')).length, 0);
  });

  it('without the extension the call answers its result, as before', async () => {
    const core = createCore({ storage });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one more note' });
    const answer = await send(replica(owner), 'tools/call', { name: 'bank_consolidate', arguments: { space_id: 'proj' } }, false);
    assert.equal(answer.result?.resultType, 'complete', JSON.stringify(answer));
    assert.equal((answer.result?.structuredContent as { notes_processed: number } | undefined)?.notes_processed, 1);
  });

  it('summaries_update is a task too', async () => {
    const handler = replica(owner);
    const created = await send(handler, 'tools/call', { name: 'summaries_update', arguments: { space_id: 'proj' } }, true);
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    const taskId = String(created.result?.taskId);
    assert.match(taskId, /^summaries_update\/proj\//);
    const done = await completed(handler, taskId);
    assert.equal((done.result as { structuredContent: { status: string } }).structuredContent.status, 'ok', JSON.stringify(done));
  });

  it("refuses a task it did not give, and another space's caller, with -32602", async () => {
    const handler = replica(owner);
    for (const taskId of ['nope', 'bank_consolidate/proj/20990101T000000-aaaaaa', 'live_note/proj/20990101T000000-aaaaaa', 'bank_consolidate/../x/y']) {
      const answer = await send(handler, 'tasks/get', { taskId }, true);
      assert.equal(answer.error?.code, -32602, `${taskId}: ${JSON.stringify(answer)}`);
    }
    const created = await send(handler, 'tools/call', { name: 'bank_consolidate', arguments: { space_id: 'proj', background: true } }, true);
    const taskId = String(created.result?.taskId);
    const refused = await send(replica(stranger), 'tasks/get', { taskId }, true);
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
    assert.equal((await send(replica(stranger), 'tasks/update', { taskId, inputResponses: {} }, true)).error?.code, -32602);
    await completed(handler, taskId);
  });

  it("the extension's own client calls bank_consolidate, follows the task and settles it with the tool's result", async () => {
    const core = createCore({ storage });
    for (let i = 0; i < 3; i++) await core.notes.write(owner, { space_id: 'proj', category: 'insight', content: `settled insight ${i}` });
    const { session, close } = await taskSession(replica(owner));
    try {
      const execution = await session.callTool('bank_consolidate', { space_id: 'proj' });
      const { outcome } = await execution.settle();
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
      const result = resultFromTaskOutcome(outcome) as unknown as { structuredContent: { status: string; notes_processed: number } };
      assert.equal(result.structuredContent.status, 'ok');
      assert.equal(result.structuredContent.notes_processed, 3);
    } finally {
      await close();
    }
  });

  it('a job whose process died is a failed task, for the raw reader and for the extension client', async () => {
    const jobId = '20261203T000000-dead00';
    const stale = '2026-12-03T00:00:00Z';
    await storage.put(
      `${spaceKeys('proj').jobs}${jobId}.json`,
      JSON.stringify({
        job_id: jobId,
        space_id: 'proj',
        state: 'running',
        started_at: stale,
        updated_at: stale,
        runner: 'gone@elsewhere:1',
        progress: null,
        result: null,
      }),
    );
    const taskId = `bank_consolidate/proj/${jobId}`;
    const answer = await send(replica(owner), 'tasks/get', { taskId }, true);
    assert.equal(answer.result?.status, 'failed', JSON.stringify(answer));
    assert.equal((answer.result?.error as { code: number } | undefined)?.code, -32603);
    assert.match(String(answer.result?.statusMessage), /gone@elsewhere:1/);
  });
});
