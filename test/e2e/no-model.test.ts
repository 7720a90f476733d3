/**
 * The truth about the bank when no model is configured, on the built binary: over stdio to a client
 * that declared no sampling, nothing asks an agent to consolidate (instructions, prompts), the
 * consolidation answers a work package whose plan the agent writes, system_health marks the model missing; to a client
 * that declared sampling, consolidation is asked for and health says the client's model is used;
 * over HTTP (no sampling there) nothing asks either. In the CLI, `consolidate`, `health` and
 * `doctor` say the same: doctor warns and names the fix, never a pass.
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
  });
  after(async () => home?.remove());

  it('to a client without sampling: no instruction or prompt asks to consolidate; the tool and health say what to set', async () => {
    const client = await stdioClient(false);
    try {
      const instructions = client.getInstructions() ?? '';
      assert.match(instructions, /live_note/, 'the rest of the workflow is there');
      assert.doesNotMatch(instructions, /bank_consolidate|consolidat/);
      const wrapUp = textOf(await client.getPrompt({ name: 'memory_wrap_up', arguments: {} }));
      assert.match(wrapUp, /live_note/);
      assert.doesNotMatch(wrapUp, /bank_consolidate/, `${NOTES} notes wait, but nothing could consolidate them`);
      const start = textOf(await client.getPrompt({ name: 'memory_start', arguments: {} }));
      assert.doesNotMatch(start, /bank_consolidate|until the first consolidation/);
      assert.match(start, /no model is configured/);

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
      assert.match(client.getInstructions() ?? '', /call bank_consolidate/);
      assert.match(textOf(await client.getPrompt({ name: 'memory_wrap_up', arguments: {} })), /call bank_consolidate/);
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

  it('over HTTP (no sampling there): nothing asks to consolidate', async () => {
    const server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
    const client = new Client({ name: 'no-model-http', version: '0' }, { capabilities: { sampling: {} } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      const instructions = client.getInstructions() ?? '';
      assert.match(instructions, /live_note/);
      assert.doesNotMatch(instructions, /bank_consolidate/);
      assert.equal(((await call(client, 'system_health')).services as { llm: { status: string } }).llm.status, 'missing');
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('the CLI: consolidate names the fix, health marks the model missing, doctor warns with the fix (never ✓)', async () => {
    const consolidate = await cli(['consolidate', 'proj']);
    assert.equal(consolidate.exitCode, 2);
    assertNamesTheFix(consolidate.stderr);

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
