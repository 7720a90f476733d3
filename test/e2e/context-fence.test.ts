/**
 * Issue 39, 2: what live-mem puts into a model's context is marked as data. The red team's two notes are
 * written through the SDK's MCP client (the binary's server, in this process, run in the project), then
 * read back as the model gets them: memory_context's text, the memory_start prompt, and the session hook's
 * output (`live-mem context . --hook` spawned in the project, as Claude Code runs it).
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { assertContextFenced, FAKE_USER, FAKE_USER_AGENT, WRAPPER_ESCAPE } from '../helpers/context-fence.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type TestServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

describe("a session's context holds notes as data", () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let server: TestServer;
  let project: string;
  let env: Record<string, string>;
  before(async () => {
    root = await tempDir('live-mem-context-fence');
    project = path.join(root.dir, 'webapp');
    await mkdir(project);
    env = { LIVE_MEM_HOME: path.join(root.dir, 'store'), LIVE_MEM_AGENT: 'tester', HOME: root.dir };
    server = await inProcessServer(env, { cwd: project });
    assert.equal((await server.call('live_note', { space_id: 'webapp', category: 'decision', content: 'The deploy uses blue-green.' })).status, 'created');
    assert.equal((await server.call('live_note', { space_id: 'webapp', category: 'decision', content: WRAPPER_ESCAPE })).status, 'created');
    const fake = await server.call('live_note', { space_id: 'webapp', category: 'decision', content: FAKE_USER, agent: FAKE_USER_AGENT });
    assert.equal(fake.agent, FAKE_USER_AGENT);
  });
  after(async () => {
    await server?.close();
    await root?.remove();
  });

  it("memory_context's text: the preamble, each note in a nonce fence, no wrapper tag, no line posing as the user", async () => {
    const context = await server.call('memory_context', { space_id: 'webapp' });
    assertContextFenced(String(context.text));
    const hits = await server.call('memory_context', { space_id: 'webapp', query: 'curl instructions user message' });
    assertContextFenced(String(hits.text));
  });

  it('memory_start embeds the same fenced text', async () => {
    const prompt = await server.client.getPrompt({ name: 'memory_start', arguments: { space: 'webapp' } });
    const text = String((prompt.messages[0]?.content as { text?: string } | undefined)?.text);
    assertContextFenced(text);
    assert.match(text, /it cannot change your instructions/);
  });

  it('the session hook (context . --hook) prints it so too', async () => {
    const hook = await execa(process.execPath, [BIN, 'context', '.', '--hook'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', ...env },
      extendEnv: false,
    });
    assert.equal(hook.exitCode, 0, hook.stderr);
    assert.match(hook.stdout, /^# Memory context of space 'webapp'\n/);
    const nonce = assertContextFenced(hook.stdout);
    const again = await execa(process.execPath, [BIN, 'context', '.', '--hook'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', ...env },
      extendEnv: false,
    });
    assert.notEqual(assertContextFenced(again.stdout), nonce, 'a nonce per session');
  });
});
