/**
 * An agent's claim on a window of notes (consolidation/claim.ts) as doctor, asks and backups see it:
 * doctor says who holds it and until when; one planted far ahead (by hand, under a wrong clock) is an
 * error that asks take over anyway and `--fix` removes; a backup never carries a claim.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import type { Finding } from '../../../src/core/system/doctor-space.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';

const claims = (findings: Finding[]) => findings.filter((finding) => finding.check === 'consolidation-claim');
const CLAIM = 'proj/_consolidation/claim.json';

describe('doctor and an agent claim', () => {
  let storage: StorageDriver;
  let core: Core;

  beforeEach(async () => {
    storage = createMemoryDriver();
    core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (const text of ['the API listens on 8443', 'the cache is in /var/cache'])
      await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: text });
  });

  it('says who writes the plan of how many notes until when, and nothing once the plan is in', async () => {
    assert.deepEqual(
      claims((await core.doctor(owner, {})).findings).map(({ status, message }) => ({ status, message })),
      [{ status: 'ok', message: 'no agent holds a window of notes' }],
    );
    const pkg = await core.consolidation.ask(owner, { space_id: 'proj' });
    assert.ok('handle' in pkg && pkg.handle);
    const [held] = claims((await core.doctor(owner, {})).findings);
    assert.equal(held?.status, 'ok');
    assert.match(held?.message ?? '', new RegExp(`'proj': tester writes the plan of 2 notes until ${pkg.expires_at}`));
  });

  it('a claim planted far ahead is an error; asks take it over, and --fix removes it', async () => {
    const planted = {
      handle: `proj:${'a'.repeat(24)}`,
      space_id: 'proj',
      claimer: 'mallory',
      claimed_at: '2026-01-01T00:00:00Z',
      expires_at: '2099-01-01T00:00:00Z',
      notes: [],
      bank: {},
      synthesis_etag: null,
      partial: [],
      nonce: 'x',
    };
    await storage.put(CLAIM, JSON.stringify(planted));
    const [found] = claims((await core.doctor(owner, {})).findings);
    assert.equal(found?.status, 'error');
    assert.match(found?.message ?? '', /by mallory claims to be held until 2099-01-01T00:00:00Z, far longer than any ask gives one/);
    assert.equal(found?.fixable, true);
    // An ask is not blocked by it: the window is claimed anew.
    const pkg = await core.consolidation.ask(owner, { space_id: 'proj' });
    assert.ok('handle' in pkg && pkg.handle && pkg.handle !== planted.handle, 'the planted claim was taken over');
    await storage.put(CLAIM, JSON.stringify(planted));
    const fixed = claims((await core.doctor(owner, { fix: true })).findings);
    assert.deepEqual(
      fixed.map(({ status, fixed }) => ({ status, fixed })),
      [{ status: 'ok', fixed: true }],
    );
    assert.equal(await storage.stat(CLAIM), null, 'removed');
  });

  it('a backup never carries a claim', async () => {
    await core.consolidation.ask(owner, { space_id: 'proj' });
    assert.ok(await storage.stat(CLAIM));
    const backup = await core.backups.create(owner, { space_id: 'proj' });
    const keys = await listKeys(storage, '_backups/');
    assert.ok(keys.length > 0, 'the backup is written');
    assert.ok(!keys.some((key) => key.includes('claim')), `${keys.join(', ')}`);
    const archive = await core.backups.download(owner, { backup_id: String(backup.backup_id) });
    assert.doesNotMatch(JSON.stringify(archive), /claim\.json/);
  });
});
