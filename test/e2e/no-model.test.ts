/**
 * The truth about the bank when no model is configured, on the built binary: over stdio to a client
 * that declared no sampling, the instructions, memory_start, memory_wrap_up, memory_context and
 * space_summary ask the agent to consolidate itself (a work package whose plan it writes), and
 * when; system_health marks the model missing; to a client that declared sampling, live-mem's
 * consolidation is asked for and health says the client's model is used; over HTTP (no sampling
 * there) the agent is asked, as on stdio. In the CLI, `consolidate`, `health` and `doctor` say the
 * same: doctor warns and names the fix, never a pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { MODEL_DOCS } from '../../src/core/model.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN, startHttpServer } from '../helpers/mcp-client.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
/** Past the backlog at which a model-backed server asks for a consolidation. */
const NOTES = 31;

/** What a person is told to set, wherever a missing model is reported. */
function assertNamesTheFix(text: string): void {
  for (const words of ['live-mem setup model --base-url', 'live-mem.yaml', 'LIVE_MEM_LLM_BASE_URL', 'LIVE_MEM_LLM_MODEL', 'LIVE_MEM_LLM_API_KEY', MODEL_DOCS])
    assert.ok(text.includes(words), `${words}: ${text}`);
}

const textOf = (result: { messages: Array<{ content: { type: string; text?: string } }> }) => result.messages.map((m) => m.content.text ?? '').join('\n');

describe('no model configured', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  let token = '';
  let readToken = '';

  /** The SDK client over stdio to the built binary; `sampling` declares the capability (and answers nothing: none is asked here). */
  async function stdioClient(sampling: boolean, extra: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'no-model-test', version: '0' }, sampling ? { capabilities: { sampling: {} } } : {});
    if (sampling) client.setRequestHandler(CreateMessageRequestSchema, () => Promise.reject(new Error('no sampling expected in this test')));
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env: { PATH: process.env.PATH ?? '', ...env, ...extra } }));
    return client;
  }
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown> & { status: string };
  const cli = (args: string[]) => execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, extendEnv: false, reject: false });

  before(async () => {
    home = await tempDir();
    env = { LIVE_MEM_HOME: home.dir, LIVE_MEM_SPACE: 'proj', LIVE_MEM_LOG_LEVEL: 'warn' };
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < NOTES; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `step ${i} done` });
    token = (await core.auth.create(owner, { name: 'agent', permissions: 'read,write', space_ids: 'proj' })).token;
    readToken = (await core.auth.create(owner, { name: 'reader', permissions: 'read', space_ids: 'proj' })).token;
  });
  after(async () => home?.remove());

  it('to a client without sampling: the agent is asked to consolidate itself, and when; the tool and health say what to set', async () => {
    const client = await stdioClient(false);
    try {
      const instructions = client.getInstructions() ?? '';
      assert.match(instructions, /live_note/, 'the rest of the workflow is there');
      assert.match(
        instructions,
        /you fold notes into the memory bank yourself: when a session starts with 30 or more notes waiting, and at the end of a task with 5 or more/,
      );
      assert.match(instructions, /call bank_consolidate\nwithout a plan for a work package/);
      assert.doesNotMatch(
        instructions,
        /When 30 or more notes wait \(space_list counts them\), call bank_consolidate to fold/,
        'no model-run consolidation is promised',
      );
      const wrapUp = textOf(await client.getPrompt({ name: 'memory_wrap_up', arguments: {} }));
      assert.match(wrapUp, /live_note/);
      assert.match(wrapUp, new RegExp(`The space has ${NOTES} live notes waiting\\. No model is configured here, so you consolidate`));
      assert.match(wrapUp, /submit it with the same tool, its handle and your plan/);
      const start = textOf(await client.getPrompt({ name: 'memory_start', arguments: {} }));
      // A context counts the newest notes up to the backlog that makes a consolidation due, not the whole space.
      assert.match(start, /30 or more live notes wait for consolidation into the memory bank; no model is configured here, so you consolidate them/);
      assert.match(start, /Do it now, before your task/, `${NOTES} notes: a session starting with 30 or more consolidates first`);
      const context = await call(client, 'memory_context');
      const { advice: _, ...backlog } = context.backlog as Record<string, unknown>;
      assert.deepEqual(backlog, { notes_waiting: 30, at_least: true, consolidated_by: 'agent', due: true });
      assert.match(String(context.text), /so you consolidate them: bank_consolidate without a plan gives a work package/);
      const { advice, ...summary } = (await call(client, 'space_summary')).backlog as Record<string, unknown>;
      assert.deepEqual(summary, { notes_waiting: NOTES, consolidated_by: 'agent', due: true }, 'space_summary counts them all');
      assert.match(String(advice), new RegExp(`^${NOTES} live notes wait for consolidation`));

      // No model: the agent writes the plan itself (core/consolidation/agent-plan.ts), from a work package.
      const offered = await call(client, 'bank_consolidate');
      assert.equal(offered.status, 'ok');
      assert.match(String(offered.handle), /^proj:/);
      assert.match(String(offered.prompt), /LIVE NOTES TO FOLD IN/);
      const health = await call(client, 'system_health');
      const llm = (health.services as { llm: { status: string; fix: string } }).llm;
      assert.equal(llm.status, 'missing');
      assertNamesTheFix(llm.fix);
      assert.equal(health.status, 'ok', 'the store is fine: notes are written and read without a model');
    } finally {
      await client.close();
    }
  });

  it("to a client that declared sampling: consolidation is asked for, and health says the client's model is used", async () => {
    const client = await stdioClient(true);
    try {
      assert.match(client.getInstructions() ?? '', /call bank_consolidate to fold them/);
      assert.doesNotMatch(client.getInstructions() ?? '', /yourself/);
      assert.match(textOf(await client.getPrompt({ name: 'memory_wrap_up', arguments: {} })), /call bank_consolidate/);
      const context = await call(client, 'memory_context');
      assert.equal((context.backlog as { consolidated_by: string }).consolidated_by, 'model');
      assert.match(String(context.text), /live-mem's model consolidates them when bank_consolidate is called: call it now/);
      const llm = ((await call(client, 'system_health')).services as { llm: { status: string; message: string } }).llm;
      assert.equal(llm.status, 'sampling');
      assert.match(llm.message, /its own model through MCP sampling/);
    } finally {
      await client.close();
    }
  });

  it('with an endpoint configured: consolidation is asked for, whatever the client declared', async () => {
    const llm = await startScriptedLlm([{ reply: '{}' }]);
    const client = await stdioClient(false, llm.env());
    try {
      assert.match(client.getInstructions() ?? '', /call bank_consolidate/);
      assert.equal(((await call(client, 'system_health')).services as { llm: { status: string } }).llm.status, 'ok');
    } finally {
      await client.close();
      await llm.close();
    }
  });

  it('over HTTP (no sampling there): the agent is asked to consolidate itself, a read token only told who may', async () => {
    const server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
    const client = new Client({ name: 'no-model-http', version: '0' }, { capabilities: { sampling: {} } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      const instructions = client.getInstructions() ?? '';
      assert.match(instructions, /live_note/);
      assert.match(instructions, /you fold notes into the memory bank yourself/);
      assert.equal(((await call(client, 'system_health')).services as { llm: { status: string } }).llm.status, 'missing');
      const reader = new Client({ name: 'no-model-http-read', version: '0' });
      await reader.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${readToken}` } } }));
      try {
        assert.doesNotMatch(reader.getInstructions() ?? '', /bank_consolidate/, 'a read token is not offered bank_consolidate');
        const context = await call(reader, 'memory_context', { space_id: 'proj' });
        assert.match(String(context.text), /30 or more live notes wait for consolidation into the memory bank; an agent with write access consolidates them/);
      } finally {
        await reader.close();
      }
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('the CLI: consolidate names the fix, health marks the model missing, doctor warns with the fix (never ✓)', async () => {
    const consolidate = await cli(['consolidate', 'proj']);
    assert.equal(consolidate.exitCode, 2);
    assertNamesTheFix(consolidate.stderr);
    assert.match(consolidate.stderr, /Or let any model write the plan: `live-mem consolidate proj --prepare`/);

    const health = await cli(['health', '--json']);
    assert.equal(health.exitCode, 0, health.stderr);
    assert.equal(JSON.parse(health.stdout).services.llm.status, 'missing');

    const doctor = await cli(['doctor']);
    assert.equal(doctor.exitCode, 0, 'a missing model is a warning, not a broken store');
    const line = doctor.stdout.split('\n').findIndex((text) => text.includes(' llm: '));
    assert.ok(line >= 0, doctor.stdout);
    const [finding, fix] = doctor.stdout.split('\n').slice(line, line + 2) as [string, string];
    assert.match(finding, /^! llm: no model configured/);
    assert.match(fix, /^\s+→ run `live-mem setup model/);
    assertNamesTheFix(fix);
    const json = JSON.parse((await cli(['doctor', '--json'])).stdout) as { findings: Array<{ check: string; status: string; hint?: string }> };
    const llm = json.findings.find((finding) => finding.check === 'llm');
    assert.equal(llm?.status, 'warn');
    assertNamesTheFix(String(llm?.hint));
  });
});
