/**
 * Tool profiles as a new user meets them: the SDK client's tools/list and its size, from the binary's
 * server (in this process; the binary itself for the --tools flag and a refusal at start).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { allTools } from '../../src/mcp/tools/index.js';
import { PEOPLE_ONLY } from '../../src/mcp/profiles.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, spawnServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const AGENT = [
  'space_list',
  'space_summary',
  'live_note',
  'live_read',
  'live_search',
  'memory_search',
  'memory_context',
  'bank_read',
  'bank_read_all',
  'bank_consolidate',
  'bank_consolidation_status',
  'system_whoami',
];
const STANDARD = [
  ...AGENT,
  'space_create',
  'space_info',
  'space_rules',
  'space_update',
  'space_delete',
  'backup_create',
  'backup_list',
  'backup_restore',
  'backup_download',
  'backup_delete',
  'space_export',
  'bank_list',
  'system_health',
  'system_about',
];
const RECALL = ['memory_search', 'memory_context', 'history_list', 'history_read', 'summaries_update', 'summaries_list', 'summaries_read'];

/** The brief's measure: the JSON of the tools/list result, characters / 4. */
const tokensOf = (listing: unknown): number => JSON.stringify(listing).length / 4;

describe('tool profiles (SDK client)', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    home = await tempDir();
  });
  after(async () => {
    await home?.remove();
  });

  /** The tools listed for LIVE_MEM_TOOLS=`tools`; with `args`, by the binary launched with them. */
  const listed = async (tools: string | undefined, args: string[] = []) => {
    const env = { LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'tester', ...(tools ? { LIVE_MEM_TOOLS: tools } : {}) };
    const server = args.length > 0 ? await spawnServer(env, args) : await inProcessServer(env);
    try {
      return { listing: await server.client.listTools(), server };
    } catch (error) {
      await server.close();
      throw error;
    }
  };

  it('agent: the tools an agent needs while it works, within 3,125 tokens (12,500 characters)', async () => {
    const { listing, server } = await listed('agent');
    try {
      assert.deepEqual(listing.tools.map((t) => t.name).sort(), [...AGENT].sort());
      const size = tokensOf(listing);
      assert.ok(size <= 3_125, `agent: ${size} tokens (issue 41: tools/list ≤ 12,500 characters)`);
      const whoami = await server.call('system_whoami');
      assert.equal(whoami.tools_profile, 'agent');
      assert.equal(whoami.tools_count, AGENT.length);
      // A tool outside the profile is not there to call.
      const refused = await server.client.callTool({ name: 'space_create', arguments: { space_id: 'x' } });
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /not found/);
    } finally {
      await server.close();
    }
  });

  it('standard: agent + spaces and backups', async () => {
    const { listing, server } = await listed('standard', []);
    try {
      assert.deepEqual(listing.tools.map((t) => t.name).sort(), [...STANDARD].sort());
      const about = await server.call('system_about');
      assert.equal(about.tools_profile, 'standard');
      assert.equal(about.tools_count, STANDARD.length);
    } finally {
      await server.close();
    }
  });

  it('all (the default): every tool, recall included, under 8,000 tokens, each schema lean but complete', async () => {
    const { listing, server } = await listed(undefined);
    try {
      const names = listing.tools.map((t) => t.name);
      assert.deepEqual(
        names,
        allTools.map((t) => t.name).filter((name) => !PEOPLE_ONLY.includes(name)),
      );
      for (const name of RECALL) assert.ok(names.includes(name), name);
      const size = tokensOf(listing);
      assert.ok(size <= 8_000, `all: ${size} tokens`);
      for (const tool of listing.tools) {
        assert.ok(tool.description && tool.description.length >= 40, `${tool.name} description`);
        assert.equal(tool.inputSchema.type, 'object', `${tool.name} inputSchema`);
        assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
        assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name} readOnlyHint`);
        const json = JSON.stringify(tool);
        assert.doesNotMatch(json, /\$schema|9007199254740991/, `${tool.name}: no dialect, no ±2^53 bounds`);
      }
      const about = await server.call('system_about');
      assert.equal(about.tools_profile, 'all');
      assert.equal(about.tools_count, allTools.length - PEOPLE_ONLY.length);
    } finally {
      await server.close();
    }
  });

  it('a list of names (a profile may be one of them), from the --tools flag too', async () => {
    const { listing, server } = await listed(undefined, ['--tools', 'agent, system_about']);
    try {
      assert.deepEqual(listing.tools.map((t) => t.name).sort(), [...AGENT, 'system_about'].sort());
      const about = await server.call('system_about');
      assert.equal(about.tools_profile, 'custom');
      assert.equal(about.tools_count, AGENT.length + 1);
    } finally {
      await server.close();
    }
  });

  it('refuses unknown tool names at start: exit 2, one line naming them and the profiles', () => {
    const run = spawnSync(process.execPath, [BIN], {
      env: { PATH: process.env.PATH ?? '', HOME: home.dir, LIVE_MEM_HOME: home.dir, LIVE_MEM_TOOLS: 'live_note,live_nope,bogus' },
      input: '',
      encoding: 'utf8',
    });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, '');
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0] ?? '', /live_nope, bogus/);
    assert.match(lines[0] ?? '', /agent, standard, all/);
  });
});
