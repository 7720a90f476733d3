/**
 * The permission matrix (seed 004): every tool, called over MCP (the binary's server, in this process) by
 * no token (auth required), a read, a write and an admin token, a token scoped to another space, and admin
 * tokens limited to alpha or to another space. Each call is allowed or refused exactly as the matrix says;
 * a refused caller learns nothing of a space's existence.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ownerCaller, type Permission } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { inProcessServer } from '../helpers/in-process.js';
import type { TestServer } from '../helpers/mcp-client.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

interface Profile {
  name: string;
  token?: string;
  permissions: Permission[];
  spaces: '*' | string[];
}

/** Arguments aimed at space 'alpha' that pass the guard but destroy nothing (deletes lack confirm). */
function argsFor(tool: string, backupId: string, caller: string): Record<string, unknown> {
  const byTool: Record<string, Record<string, unknown>> = {
    space_create: { space_id: 'alpha' },
    space_update: { space_id: 'alpha', description: `touched by ${caller}` },
    space_delete: { space_id: 'alpha', confirm: false },
    live_note: { space_id: 'alpha', category: 'todo', content: `by ${caller}` },
    live_search: { space_id: 'alpha', query: 'x' },
    memory_search: { space_id: 'alpha', query: 'x' },
    history_read: { space_id: 'alpha', consolidation_id: '20260101T000000-zzzzzz' },
    bank_read: { space_id: 'alpha', filename: 'activeContext.md' },
    bank_explain: { space_id: 'alpha', filename: 'activeContext.md' },
    bank_compact: { space_id: 'alpha', dry_run: true },
    bank_write: { space_id: 'alpha', filename: 'matrix.md', content: `# Matrix\n\nby ${caller}\n` },
    bank_delete: { space_id: 'alpha', filename: 'activeContext.md', confirm: false },
    bank_revert: { space_id: 'alpha', revision_id: '20260101T000000-zzzzzz', confirm: false },
    space_update_rules: { space_id: 'alpha', rules: `# Rules by ${caller}\n` },
    memory_forget: { space_id: 'alpha', refs: ['20260101T000000_nobody_observation_00000000.md'] },
    summaries_read: { space_id: 'alpha', summary_id: 'L1-20260101T000000-zz' },
    backup_list: { space_id: 'alpha' },
    backup_restore: { backup_id: backupId, confirm: false, as: 'alpha' },
    backup_download: { backup_id: backupId },
    backup_delete: { backup_id: backupId, confirm: false },
    admin_create_token: { name: `made-by-${caller}`, permissions: 'read', space_ids: 'alpha' },
    admin_revoke_token: { token: 'nobody' },
    admin_update_token: { token: 'nobody', permissions: 'read' },
    admin_delete_token: { token_hash: 'nobody' },
  };
  const definition = allTools.find((t) => t.name === tool);
  return byTool[tool] ?? (definition && 'space_id' in definition.input ? { space_id: 'alpha' } : {});
}

/**
 * Tools that name a space (directly, through a backup id, or as the spaces of a token to create) need
 * access to it; the others only a permission.
 */
const touchesSpace = (tool: (typeof allTools)[number]) => 'space_id' in tool.input || 'backup_id' in tool.input || tool.name === 'admin_create_token';

function allowed(profile: Profile, tool: (typeof allTools)[number]): boolean {
  if (tool.permission === 'public') return true;
  const implied = { read: ['read', 'write', 'admin'], write: ['write', 'admin'], admin: ['admin'] }[tool.permission];
  if (!implied.some((p) => profile.permissions.includes(p as Permission))) return false;
  // An admin limited to spaces cannot tell the token 'nobody' (missing) from one outside its scope: forbidden.
  if ('token' in tool.input) return profile.spaces === '*';
  return !touchesSpace(tool) || profile.spaces === '*' || profile.spaces.includes('alpha');
}

describe('the permission matrix, over MCP', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let backupId = '';
  const profiles: Profile[] = [
    { name: 'no-token', permissions: [], spaces: [] },
    { name: 'reader', permissions: ['read'], spaces: ['alpha'] },
    { name: 'writer', permissions: ['read', 'write'], spaces: ['alpha'] },
    { name: 'admin', permissions: ['read', 'write', 'admin'], spaces: '*' },
    { name: 'elsewhere', permissions: ['read', 'write'], spaces: ['other'] },
    { name: 'alpha-admin', permissions: ['read', 'write', 'admin'], spaces: ['alpha'] },
    { name: 'other-admin', permissions: ['read', 'write', 'admin'], spaces: ['other'] },
  ];

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    const owner = ownerCaller('owner');
    for (const space of ['alpha', 'other']) await core.spaces.create(owner, { space_id: space });
    await core.notes.write(owner, { space_id: 'alpha', category: 'todo', content: 'seed' });
    backupId = (await core.backups.create(owner, { space_id: 'alpha' })).backup_id;
    for (const profile of profiles.slice(1)) {
      profile.token = (
        await core.auth.create(owner, {
          name: profile.name,
          permissions: profile.permissions.join(','),
          space_ids: profile.spaces === '*' ? '*' : profile.spaces.join(','),
        })
      ).token;
    }
  });
  after(async () => home?.remove());

  for (const profile of profiles) {
    it(`${profile.name}: every tool allowed or refused as the matrix says`, async () => {
      const server: TestServer = await inProcessServer({
        LIVE_MEM_HOME: home.dir,
        LIVE_MEM_AUTH: 'required',
        LIVE_MEM_LOG_LEVEL: 'warn',
        LIVE_MEM_TOOLS: 'admin', // every tool, the corrections by people included
        ...(profile.token ? { LIVE_MEM_TOKEN: profile.token } : {}),
      });
      try {
        const wrong: string[] = [];
        for (const tool of allTools) {
          const result = await server.call(tool.name, argsFor(tool.name, backupId, profile.name));
          const expected = allowed(profile, tool);
          if (expected === (result.status === 'forbidden'))
            wrong.push(`${tool.name}: ${expected ? 'allowed' : 'refused'} expected, got ${result.status} ${String(result.message ?? '')}`);
        }
        assert.deepEqual(wrong, []);
        // A caller without access to a space cannot tell it from one that does not exist.
        if (!allowed(profile, allTools.find((t) => t.name === 'space_info')!)) {
          const real = await server.call('space_info', { space_id: 'alpha' });
          const ghost = await server.call('space_info', { space_id: 'ghost' });
          assert.equal(real.status, 'forbidden');
          assert.equal(ghost.status, 'forbidden');
          assert.equal(String(real.message).replace('alpha', 'X'), String(ghost.message).replace('ghost', 'X'));
        }
        const listed = await server.call('space_list');
        if (listed.status === 'ok') {
          const ids = (listed.spaces as Array<{ space_id: string }>).map((s) => s.space_id).sort();
          assert.deepEqual(ids, profile.spaces === '*' ? ['alpha', 'other'] : [...profile.spaces].sort());
        }
        const whoami = await server.call('system_whoami');
        assert.equal(whoami.agent, profile.token ? profile.name : 'anonymous');
      } finally {
        await server.close();
      }
    });
  }

  it('a token revoked while its session is open is refused from the next call', async () => {
    const core = createCore({ storage: createFsDriver(home.dir) });
    const owner = ownerCaller('owner');
    const { token } = await core.auth.create(owner, { name: 'soon-revoked', permissions: 'read', space_ids: '*' });
    const server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_TOKEN: token, LIVE_MEM_LOG_LEVEL: 'warn' });
    try {
      assert.equal((await server.call('space_list')).status, 'ok');
      await core.auth.revoke(owner, { token: 'soon-revoked' });
      assert.equal((await server.call('space_list')).status, 'forbidden');
      assert.equal((await server.call('system_health')).status, 'ok', 'public tools still answer');
      assert.ok(!server.stderr().includes(token), 'the token never reaches a log');
    } finally {
      await server.close();
    }
  });
});

describe('system_health, public but not telling', () => {
  it('an anonymous caller gets the statuses, never the endpoint; a token gets the details', async () => {
    const home = await tempDir();
    const llm = await startScriptedLlm([{ reply: '{}' }], { models: ['internal-model'] });
    const core = createCore({ storage: createFsDriver(home.dir) });
    const { token } = await core.auth.create(ownerCaller('owner'), { name: 'reader', permissions: 'read', space_ids: 'alpha' });
    const env = {
      LIVE_MEM_HOME: home.dir,
      LIVE_MEM_AUTH: 'required',
      LIVE_MEM_LOG_LEVEL: 'warn',
      LIVE_MEM_LLM_BASE_URL: llm.url,
      LIVE_MEM_LLM_MODEL: 'internal-model',
      LIVE_MEM_LLM_API_KEY: 'k',
    };
    const anonymous = await inProcessServer(env);
    const reader = await inProcessServer({ ...env, LIVE_MEM_TOKEN: token });
    try {
      const open = await anonymous.call('system_health');
      assert.equal(open.status, 'ok');
      const services = open.services as Record<string, Record<string, unknown>>;
      assert.equal(services.storage?.status, 'ok');
      assert.equal(services.llm?.status, 'ok', 'a probe still learns the model is configured and reachable');
      const text = JSON.stringify(open);
      const port = new URL(llm.url).port;
      assert.ok(!text.includes(`:${port}`) && !text.includes('internal-model') && !text.includes('127.0.0.1'), `no endpoint shown: ${text}`);

      const told = await reader.call('system_health');
      assert.match(String((told.services as Record<string, Record<string, unknown>>).llm?.model), /internal-model @ http:\/\/127\.0\.0\.1:/);
    } finally {
      await Promise.all([anonymous.close(), reader.close(), llm.close()]);
      await home.remove();
    }
  });
});
