/**
 * One damaged space does not break the store, on the built binary: a garbage `_meta.json` in one space
 * leaves `space_list` and `resources/list` (MCP, the binary's server in this process) and `live-mem space
 * list` working for the others, lists the damaged one as broken, and `live-mem doctor` reports it; `history
 * list` skips a garbage record.json; a lease planted until 2099 is reported and removed by `doctor --fix`;
 * a bank file linked out of the store is not served, and a 5 GiB file in live/ hides only itself.
 */
import assert from 'node:assert/strict';
import { rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const BROKEN = /_meta\.json is unreadable \(not JSON\)/;

describe('damaged files in a store, as the binary sees them', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  const cli = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' },
      extendEnv: false,
      reject: false,
    });

  before(async () => {
    home = await tempDir();
    const storage = createFsDriver(home.dir);
    const core = createCore({ storage });
    const owner = ownerCaller('tester');
    for (const id of ['alpha', 'beta', 'gamma']) await core.spaces.create(owner, { space_id: id, description: `space ${id}` });
    await core.notes.write(owner, { space_id: 'gamma', category: 'progress', content: 'one note' });
    await storage.put('beta/_meta.json', 'garbage, not JSON');
    await storage.close?.();
  });
  after(async () => home?.remove());

  it('space_list and resources/list over MCP list the others, and space_list the broken one as broken', async () => {
    const server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });
    try {
      const listed = await server.call('space_list');
      assert.equal(listed.status, 'ok');
      const spaces = listed.spaces as Array<Record<string, unknown>>;
      assert.deepEqual(
        spaces.map((space) => space.space_id),
        ['alpha', 'beta', 'gamma'],
      );
      assert.match(String(spaces[1]?.error), BROKEN);
      assert.equal(spaces[2]?.live_notes_count, 1);
      assert.equal(spaces[0]?.error, undefined);
      const { resources } = await server.client.listResources();
      const names = resources.map((resource) => resource.name);
      assert.ok(names.includes('alpha/rules') && names.includes('gamma/synthesis'), names.join(', '));
      assert.ok(!names.some((name) => name.startsWith('beta/')), 'the broken space has nothing to list');
    } finally {
      await server.close();
    }
  });

  it('`live-mem space list` shows the others and the broken one; `doctor` reports it as an error', async () => {
    const text = await cli(['space', 'list']);
    assert.equal(text.exitCode, 0, text.stderr);
    assert.match(text.stdout, /^alpha\s+0\s+0\s+tester\s+space alpha\s+-$/m);
    assert.match(text.stdout, /^beta\s+.*_meta\.json is unreadable/m);
    assert.match(text.stdout, /^gamma\s+1\s+0\s+tester\s+space gamma\s+-$/m);
    const json = JSON.parse((await cli(['space', 'list', '--json'])).stdout) as { total: number; spaces: Array<{ space_id: string; error?: string }> };
    assert.equal(json.total, 3);
    assert.match(json.spaces.find((space) => space.space_id === 'beta')?.error ?? '', BROKEN);

    const doctor = await cli(['doctor']);
    assert.equal(doctor.exitCode, 1);
    assert.match(doctor.stdout, /^✗ meta: beta\/_meta\.json is unreadable \(not JSON\)/m);
    assert.match(doctor.stdout, /^ {4}→ restore beta\/_meta\.json from a backup/m);
  });

  it('`live-mem history list` skips a garbage record.json with a warning, and `doctor` reports it', async () => {
    const storage = createFsDriver(home.dir);
    await storage.put('gamma/history/20260101T000000-zzzzzz/record.json', '{ garbage');
    await storage.close?.();
    const listed = await cli(['history', 'list', 'gamma']);
    assert.equal(listed.exitCode, 0, listed.stderr);
    assert.match(listed.stderr, /history record 20260101T000000-zzzzzz of space 'gamma' is not valid JSON: the history leaves it out/);
    const doctor = await cli(['doctor', 'gamma']);
    assert.equal(doctor.exitCode, 1);
    assert.match(doctor.stdout, /^✗ history-files: gamma\/history\/20260101T000000-zzzzzz\/record\.json is not valid JSON/m);
    await rm(path.join(home.dir, 'gamma', 'history'), { recursive: true });
  });

  it('a bank file linked out of the store is not served; a sparse 5 GiB file in live/ leaves reads and searches of the other notes working', async () => {
    const outside = await tempDir('live-mem-outside');
    try {
      const storage = createFsDriver(home.dir);
      const core = createCore({ storage });
      const owner = ownerCaller('tester');
      await core.spaces.create(owner, { space_id: 'delta' });
      await core.notes.write(owner, { space_id: 'delta', category: 'decision', content: 'the deploy goes through the blue cluster' });
      await core.notes.write(owner, { space_id: 'delta', category: 'progress', content: 'blue cluster drained for the upgrade' });
      await storage.close?.();
      const secret = path.join(outside.dir, 'shadow');
      await writeFile(secret, 'root:$6$planted-hash:19000:0:99999:7:::\n');
      await symlink(secret, path.join(home.dir, 'delta', 'bank', 'shadow.md'));
      execFileSync('truncate', ['-s', '5G', path.join(home.dir, 'delta', 'live', '20260101T000000_mallory_observation_zzzzzzzz.md')]);

      const server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });
      try {
        const read = await server.call('bank_read', { space_id: 'delta', filename: 'shadow.md' });
        assert.equal(read.status, 'not_found', JSON.stringify(read));
        assert.doesNotMatch(JSON.stringify(await server.call('bank_read_all', { space_id: 'delta' })), /planted-hash/);
        const live = await server.call('live_read', { space_id: 'delta' });
        assert.equal(live.status, 'ok', JSON.stringify(live));
        assert.match(JSON.stringify(live), /blue cluster drained/);
        const found = await server.call('memory_search', { space_id: 'delta', query: 'blue cluster' });
        assert.equal(found.status, 'ok', JSON.stringify(found));
        assert.match(JSON.stringify(found), /deploy goes through the blue cluster/);
      } finally {
        await server.close();
      }
      const doctor = await cli(['doctor', 'delta']);
      assert.match(doctor.stdout, /^! notes: .*20260101T000000_mallory_observation_zzzzzzzz\.md has 5368709120 bytes, more than any note live-mem writes/m);
    } finally {
      await rm(path.join(home.dir, 'delta'), { recursive: true, force: true });
      await outside.remove();
    }
  });

  it('`doctor` reports a lease planted until 2099 and `doctor --fix` removes it', async () => {
    const storage = createFsDriver(home.dir);
    await storage.put(
      'alpha/_consolidation/lock.json',
      JSON.stringify({ owner: 'consolidation:x@archive:1', token: 'planted', acquired_at: '2026-01-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z' }),
    );
    const found = await cli(['doctor', 'alpha']);
    assert.equal(found.exitCode, 1);
    assert.match(found.stdout, /^✗ leases: the consolidation lease of 'alpha' claims to be held until 2099-01-01T00:00:00Z/m);
    const fixed = await cli(['doctor', 'alpha', '--fix']);
    assert.equal(fixed.exitCode, 0, fixed.stdout);
    assert.match(fixed.stdout, /^✓ leases: removed the consolidation lease of 'alpha' .* \(fixed\)$/m);
    assert.equal(await storage.stat('alpha/_consolidation/lock.json'), null);
    await storage.close?.();
  });
});
