/**
 * The memory bank on day one, for each of the four clients (issue 41's acceptance): the entry a
 * plain `live-mem setup <client>` writes, no model and no key, launched by the SDK's stdio client as
 * that client launches it (in `/` with no roots for Claude Desktop and Cline, Cline passing only PATH
 * and the entry's env; in the project for Claude Code and Cursor). A scripted agent follows what the
 * server tells it: the instructions (give `project` where there is no default space), notes while it
 * works, then memory_wrap_up, which asks it to consolidate; it asks for a work package, writes the
 * plan and submits it. The bank forms, and the next session's memory_context starts with it.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';
import { tempDir } from '../helpers/tmp.js';

const USER_FILE = {
  'claude-code': '.claude.json',
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  cursor: '.cursor/mcp.json',
  cline: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
} as const;
type ClientName = keyof typeof USER_FILE;
/** Where each client starts a stdio server (setup-launch.test.ts). */
const STARTS_IN: Record<ClientName, 'root' | 'project'> = { 'claude-code': 'project', 'claude-desktop': 'root', cursor: 'project', cline: 'root' };
type Entry = { command: string; args?: string[]; env?: Record<string, string> };

const FACTS = [
  'decision: the session store moves to Postgres 16, because SQLite locked under load.',
  'progress: the login page renders on the new API (port 8443).',
  'issue: the nightly export fails on files over 2 GB.',
  'todo: rotate the staging certificates before 2027-01-15.',
  'observation: the cache lives in /var/cache/webapp.',
];

const textOf = (result: { messages: Array<{ content: { type: string; text?: string } }> }) => result.messages.map((m) => m.content.text ?? '').join('\n');

describe('the memory bank on day one, with each client as setup writes it (no model, no key)', () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  const realHome = process.env.HOME;
  before(async () => {
    root = await tempDir('live-mem-day-one');
  });
  after(async () => {
    process.env.HOME = realHome;
    await root?.remove();
  });

  for (const client of Object.keys(USER_FILE) as ClientName[]) {
    it(`${client}: the first session's agent forms the bank, and the next session starts with it`, async () => {
      const home = path.join(root.dir, client, 'home');
      const project = path.join(root.dir, client, 'webapp');
      await mkdir(project, { recursive: true });
      await mkdir(home, { recursive: true });
      const setup = await execa(process.execPath, [BIN, 'setup', client], {
        cwd: project,
        env: { PATH: process.env.PATH ?? '', HOME: home },
        extendEnv: false,
        reject: false,
      });
      assert.equal(setup.exitCode, 0, setup.stderr);
      const entry = JSON.parse(await readFile(path.join(home, USER_FILE[client]), 'utf8')).mcpServers['live-mem'] as Entry;
      // The SDK's stdio transport adds its default variables (HOME among them) from this process, as a client adds its own.
      process.env.HOME = home;
      const session = async (): Promise<Client> => {
        const mcp = new Client({ name: client, version: '0.0.0' });
        const env = client === 'cline' ? { ...entry.env, PATH: process.env.PATH ?? '' } : { ...entry.env };
        const cwd = STARTS_IN[client] === 'root' ? '/' : project;
        await mcp.connect(new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env, cwd, stderr: 'ignore' }));
        return mcp;
      };
      const call = async (mcp: Client, name: string, args: Record<string, unknown>) => {
        const result = (await mcp.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
        assert.ok(result.status === 'ok' || result.status === 'created', `${client} ${name}: ${JSON.stringify(result)}`);
        return result;
      };

      // Session 1: the agent reads the instructions, notes as it works, wraps up and consolidates.
      const first = await session();
      let spaceId: string;
      try {
        const instructions = first.getInstructions() ?? '';
        assert.match(instructions, /you fold notes into the memory bank yourself/, `${client}: the agent is told it consolidates`);
        // Where there is no default space (a server started in / without roots), the instructions ask for `project`.
        const where = /Give project on every call/.test(instructions) ? { project } : {};
        assert.equal(STARTS_IN[client] === 'root', 'project' in where, `${client}: ${instructions}`);
        let written: Record<string, unknown> = {};
        for (const fact of FACTS) {
          const [category, content] = fact.split(': ') as [string, string];
          written = await call(first, 'live_note', { ...where, category, content });
        }
        spaceId = String(written.space_id);
        const wrapUp = textOf(await first.getPrompt({ name: 'memory_wrap_up', arguments: { space: spaceId } }));
        assert.match(wrapUp, /5 live notes waiting\. No model is configured here, so you consolidate/, wrapUp);
        const pkg = (await call(first, 'bank_consolidate', { space_id: spaceId })) as { handle: string; prompt: string; notes_in_window: number };
        assert.equal(pkg.notes_in_window, FACTS.length);
        const done = await call(first, 'bank_consolidate', { space_id: spaceId, handle: pkg.handle, plan: writePlan(pkg) });
        assert.equal(done.notes_processed, FACTS.length);
        assert.equal(done.notes_remaining, 0);
      } finally {
        await first.close();
      }

      // Session 2: memory_context without a query starts with where the work stands.
      const second = await session();
      try {
        const context = await call(second, 'memory_context', { space_id: spaceId });
        const text = String(context.text);
        const bank = text.indexOf('## Where the work stands');
        assert.ok(bank > 0, `${client}: ${text}`);
        assert.ok(!text.includes('## Recent notes') || bank < text.indexOf('## Recent notes'), `${client}: the bank comes first`);
        for (const fact of FACTS) assert.ok(text.slice(bank).includes(fact.split(': ')[1] as string), `${client}: ${fact}`);
        assert.match(text, /No live note waits for consolidation/);
      } finally {
        await second.close();
      }
    });
  }
});
