/**
 * An admin limited to some spaces administers only the tokens within them (token-scope.ts): it cannot
 * mint a `*` token or one for another space, widen its own token, see, revoke, change or delete a
 * broader token, nor tell a token of another space from one that does not exist. It still does its job.
 */
import assert from 'node:assert/strict';
import { stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Caller } from '../../../src/core/caller.js';
import { createCore, type Core } from '../../../src/core/core.js';
import { isLiveMemError, type LiveMemError } from '../../../src/shared/errors.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { tempDir } from '../../helpers/tmp.js';

const TOKENS = '_system/tokens.json';

async function setup(options: { now?: () => Date; leadExpiresInDays?: number; storage?: StorageDriver } = {}) {
  const storage = options.storage ?? createMemoryDriver();
  const core = createCore({ storage, ...(options.now ? { clock: options.now } : {}), auth: { required: true, ownerAgent: 'me' } });
  for (const space of ['alpha', 'beta']) await core.spaces.create(owner, { space_id: space });
  const make = async (name: string, permissions: string, space_ids: string, expires_in_days?: number) =>
    core.auth.create(owner, { name, permissions, space_ids, ...(expires_in_days !== undefined ? { expires_in_days } : {}) });
  const root = await make('root', 'read,write,admin', '*');
  const lead = await make('lead', 'read,write,admin', 'alpha', options.leadExpiresInDays);
  const wide = await make('wide', 'read,write', 'alpha,beta');
  await make('beta-reader', 'read', 'beta');
  await make('everywhere', 'read', '*');
  await make('alpha-reader', 'read', 'alpha');
  const caller = await core.auth.resolve(lead.token);
  return { core, storage, caller, lead, root, wide };
}

const snapshot = async (storage: StorageDriver) => (await storage.get(TOKENS))?.body.toString('utf8');

/** Expects `forbidden`, and that the token file did not change. */
async function refused(storage: StorageDriver, attempt: Promise<unknown>, why: RegExp): Promise<string> {
  const before = await snapshot(storage);
  const error = await attempt.then(
    () => assert.fail('expected forbidden'),
    (e: unknown) => e,
  );
  assert.ok(isLiveMemError(error, 'forbidden'), String(error));
  assert.match((error as LiveMemError).message, why);
  assert.equal(await snapshot(storage), before, 'nothing changed');
  return (error as LiveMemError).message;
}

const names = async (core: Core, caller: Caller) => (await core.auth.list(caller)).tokens.map((t) => t.name).sort();

describe('an admin limited to some spaces', () => {
  it('cannot create a * token, nor one reaching a space outside its own', async () => {
    const { core, storage, caller } = await setup();
    await refused(storage, core.auth.create(caller, { name: 'x', permissions: 'read,write,admin', space_ids: '*' }), /every space \('\*'\)/);
    await refused(storage, core.auth.create(caller, { name: 'x', permissions: 'read', space_ids: 'beta' }), /space 'beta'.*outside its own/);
    await refused(storage, core.auth.create(caller, { name: 'x', permissions: 'read', space_ids: 'alpha,beta' }), /space 'beta'/);
  });

  it('creates tokens for its own spaces, with any permission up to admin, and revokes or deletes them', async () => {
    const { core, caller } = await setup();
    const reader = await core.auth.create(caller, { name: 'helper', permissions: 'read', space_ids: 'alpha' });
    assert.equal(reader.status, 'created');
    const helper = await core.auth.resolve(reader.token);
    assert.equal((await core.spaces.info(helper, { space_id: 'alpha' })).space_id, 'alpha');
    await assert.rejects(core.spaces.info(helper, { space_id: 'beta' }), (e: unknown) => isLiveMemError(e, 'forbidden'));
    assert.equal((await core.auth.create(caller, { name: 'deputy', permissions: 'read,write,admin', space_ids: 'alpha' })).status, 'created');
    assert.equal((await core.auth.update(caller, { token: 'helper', permissions: 'read,write' })).state, 'active');
    assert.equal((await core.auth.revoke(caller, { token: reader.hash_prefix })).state, 'revoked');
    await assert.rejects(core.auth.resolve(reader.token), (e: unknown) => isLiveMemError(e, 'forbidden'));
    assert.equal((await core.auth.delete(caller, { token: 'helper' })).status, 'deleted');
  });

  it('lists only the tokens within its spaces, and says so', async () => {
    const { core, caller } = await setup();
    const list = await core.auth.list(caller);
    assert.deepEqual(list.tokens.map((t) => t.name).sort(), ['alpha-reader', 'lead']);
    assert.equal(list.total, 2);
    assert.deepEqual(list.scope, ['alpha']);
    const all = await core.auth.list(owner);
    assert.equal(all.total, 6);
    assert.equal(all.scope, '*');
  });

  it('cannot widen, narrow or re-permission its own token, but may revoke it', async () => {
    const { core, storage, caller, lead } = await setup();
    await refused(storage, core.auth.update(caller, { token: 'lead', add_space_ids: 'beta' }), /its own token/);
    await refused(storage, core.auth.update(caller, { token: 'lead', space_ids: '*' }), /its own token/);
    await refused(storage, core.auth.update(caller, { token: 'lead', permissions: 'read' }), /its own token/);
    assert.equal((await core.auth.revoke(caller, { token: 'lead' })).state, 'revoked');
    await assert.rejects(core.auth.resolve(lead.token), (e: unknown) => isLiveMemError(e, 'forbidden'));
  });

  it('cannot revoke, change or delete a broader token; it cannot tell one from a token that does not exist', async () => {
    const { core, storage, caller, root, wide } = await setup();
    const missing = await refused(storage, core.auth.revoke(caller, { token: 'ghost' }), /no token named or hashed "ghost" within spaces alpha/);
    for (const target of ['root', 'wide', 'beta-reader', 'everywhere', root.hash_prefix, wide.hash_prefix.slice(0, 8)]) {
      const same = (message: string) => assert.equal(message.replace(JSON.stringify(target), '"ghost"'), missing, target);
      same(await refused(storage, core.auth.revoke(caller, { token: target }), /within spaces alpha/));
      same(await refused(storage, core.auth.delete(caller, { token: target }), /within spaces alpha/));
      same(await refused(storage, core.auth.update(caller, { token: target, permissions: 'read' }), /within spaces alpha/));
      same(await refused(storage, core.auth.update(caller, { token: target, remove_space_ids: 'beta' }), /within spaces alpha/));
    }
    assert.equal((await core.auth.resolve(root.token)).agent, 'root');
    assert.equal(await core.auth.list(owner).then((l) => l.total), 6);
  });

  it('cannot move a token of its spaces out of them', async () => {
    const { core, storage, caller } = await setup();
    await refused(storage, core.auth.update(caller, { token: 'alpha-reader', add_space_ids: 'beta' }), /space 'beta'/);
    await refused(storage, core.auth.update(caller, { token: 'alpha-reader', space_ids: '*' }), /every space/);
    await refused(storage, core.auth.update(caller, { token: 'alpha-reader', space_ids: 'beta' }), /space 'beta'/);
    assert.deepEqual(await names(core, caller), ['alpha-reader', 'lead']);
  });

  it('cannot make a token that outlives its own', async () => {
    const now = Date.parse('2026-03-01T00:00:00Z');
    const { core, storage, caller } = await setup({ now: () => new Date(now), leadExpiresInDays: 7 });
    await refused(storage, core.auth.create(caller, { name: 'forever', permissions: 'read,write,admin', space_ids: 'alpha' }), /cannot outlive it/);
    await refused(storage, core.auth.create(caller, { name: 'longer', permissions: 'read', space_ids: 'alpha', expires_in_days: 8 }), /cannot outlive it/);
    assert.equal((await core.auth.create(caller, { name: 'week', permissions: 'read', space_ids: 'alpha', expires_in_days: 7 })).status, 'created');
  });

  it('acts on other admin operations only in its own spaces (doctor --fix of the whole store included)', async () => {
    const home = await tempDir();
    try {
      const { core, caller } = await setup({ storage: createFsDriver(home.dir) });
      const forbidden = (e: unknown) => isLiveMemError(e, 'forbidden');
      const backup = await core.backups.create(owner, { space_id: 'beta' });
      const archive = await core.backups.exportBase64(owner, { space_id: 'alpha' });
      const open = async function* () {
        yield Buffer.from(archive.archive_base64, 'base64');
      };
      await assert.rejects(core.spaces.delete(caller, { space_id: 'beta', confirm: true }), forbidden);
      await assert.rejects(core.backups.delete(caller, { backup_id: backup.backup_id, confirm: true }), forbidden);
      await assert.rejects(core.backups.restore(caller, { backup_id: backup.backup_id, confirm: true }), forbidden);
      await assert.rejects(core.backups.importArchive(caller, open, { as: 'gamma' }), forbidden);
      await assert.rejects(core.doctor(caller, { space_id: 'beta', fix: true }), forbidden);
      // Debris killed writers left in both spaces: a fix of "everything" by the admin of alpha clears alpha's only.
      const stale = new Date(Date.now() - 2 * 3_600_000);
      for (const space of ['alpha', 'beta']) {
        const file = path.join(home.dir, space, 'live', 'x.md.0a1b2c.lmtmp');
        await writeFile(file, 'left by a killed writer');
        await utimes(file, stale, stale);
      }
      const doctor = await core.doctor(caller, { fix: true });
      assert.doesNotMatch(JSON.stringify(doctor.findings), /beta/);
      await assert.rejects(stat(path.join(home.dir, 'alpha', 'live', 'x.md.0a1b2c.lmtmp')));
      await stat(path.join(home.dir, 'beta', 'live', 'x.md.0a1b2c.lmtmp'));
      assert.equal((await core.spaces.info(owner, { space_id: 'beta' })).space_id, 'beta');
      assert.equal((await core.backups.list(owner, { space_id: 'beta' })).total, 1);
    } finally {
      await home.remove();
    }
  });
});

describe('an admin over every space', () => {
  it('manages every token, as before', async () => {
    const { core, root } = await setup();
    const admin = await core.auth.resolve(root.token);
    assert.equal((await core.auth.list(admin)).total, 6);
    assert.equal((await core.auth.update(admin, { token: 'lead', add_space_ids: 'beta' })).state, 'active');
    assert.equal((await core.auth.create(admin, { name: 'all', permissions: 'read', space_ids: '*' })).status, 'created');
    assert.equal((await core.auth.revoke(admin, { token: 'wide' })).state, 'revoked');
    await assert.rejects(core.auth.revoke(admin, { token: 'ghost' }), (e: unknown) => isLiveMemError(e, 'not_found'));
  });
});
