import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS } from '../../../src/core/auth/auth-service.js';
import { hashToken } from '../../../src/core/auth/token-store.js';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { owner } from '../../helpers/core.js';

const code = (c: string) => (e: unknown) => isLiveMemError(e, c as never);

function setup(options: { required?: boolean; adminToken?: string; now?: () => Date } = {}) {
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    ...(options.now ? { clock: options.now } : {}),
    auth: { required: options.required ?? false, ownerAgent: 'me', ...(options.adminToken ? { adminTokenHash: hashToken(options.adminToken) } : {}) },
  });
  return { core, storage };
}

describe('tokens', () => {
  it('creates a token shown once, stores only its hash, and resolves it to a caller', async () => {
    const { core, storage } = setup();
    const created = await core.auth.create(owner, { name: 'cline', permissions: 'read,write', space_ids: 'alpha,beta' });
    assert.match(created.token, /^lm_[A-Za-z0-9_-]{43}$/);
    const stored = (await storage.get('_system/tokens.json'))!.body.toString();
    assert.ok(!stored.includes(created.token) && !stored.includes(created.token.slice(3)));
    assert.ok(stored.includes(hashToken(created.token)));
    const listed = JSON.stringify(await core.auth.list(owner));
    assert.ok(!listed.includes(created.token) && !listed.includes(hashToken(created.token)), 'the list shows a prefix only');
    const caller = await core.auth.resolve(created.token);
    assert.equal(caller.agent, 'cline');
    assert.deepEqual([...caller.permissions], ['read', 'write']);
    assert.deepEqual(caller.spaces === '*' ? '*' : [...caller.spaces], ['alpha', 'beta']);
    assert.equal(caller.canChooseAgent, false);
  });

  it('refuses bad input: names, permissions, empty space_ids, duplicates, expiry', async () => {
    const { core } = setup();
    await core.auth.create(owner, { name: 'a', permissions: 'read', space_ids: '*' });
    const bad: Array<[Parameters<typeof core.auth.create>[1], string]> = [
      [{ name: '../x', permissions: 'read', space_ids: '*' }, 'invalid_input'],
      [{ name: 'b', permissions: 'read,superuser', space_ids: '*' }, 'invalid_input'],
      [{ name: 'b', permissions: '', space_ids: '*' }, 'invalid_input'],
      [{ name: 'b', permissions: 'read', space_ids: '' }, 'invalid_input'],
      [{ name: 'b', permissions: 'read', space_ids: 'ok,bad id' }, 'invalid_input'],
      [{ name: 'b', permissions: 'read', space_ids: '*', expires_in_days: -1 }, 'invalid_input'],
      [{ name: 'a', permissions: 'read', space_ids: '*' }, 'already_exists'],
    ];
    for (const [input, expected] of bad) await assert.rejects(core.auth.create(owner, input), code(expected), JSON.stringify(input));
    assert.equal((await core.auth.list(owner)).total, 1);
  });

  it('refuses a wrong, revoked or expired token at once', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { core } = setup({ now: () => new Date(now) });
    const short = await core.auth.create(owner, { name: 'short', permissions: 'read', space_ids: '*', expires_in_days: 1 });
    const revoked = await core.auth.create(owner, { name: 'gone', permissions: 'read', space_ids: '*' });
    await core.auth.resolve(short.token);
    await core.auth.revoke(owner, { token: 'gone' });
    await assert.rejects(core.auth.resolve(revoked.token), code('forbidden'));
    await assert.rejects(core.auth.resolve(`${short.token.slice(0, -1)}x`), code('forbidden'));
    await assert.rejects(core.auth.resolve('not-a-token'), code('forbidden'));
    now += 2 * 86_400_000;
    await assert.rejects(core.auth.resolve(short.token), code('forbidden'));
    assert.deepEqual(
      (await core.auth.list(owner)).tokens.map((t) => t.state),
      ['expired', 'revoked'],
    );
  });

  it('states a token the same on the injected clock in list, update and revoke (an expiry in 2090: the wall clock would call it active)', async () => {
    let now = Date.parse('2090-01-01T00:00:00Z');
    const { core } = setup({ now: () => new Date(now) });
    await core.auth.create(owner, { name: 'short', permissions: 'read', space_ids: 'a', expires_in_days: 1 });
    await core.auth.create(owner, { name: 'other', permissions: 'read', space_ids: 'a', expires_in_days: 1 });
    assert.equal((await core.auth.update(owner, { token: 'short', add_space_ids: 'b' })).state, 'active');
    now += 2 * 86_400_000;
    assert.deepEqual(
      (await core.auth.list(owner)).tokens.map((t) => [t.name, t.state]),
      [
        ['short', 'expired'],
        ['other', 'expired'],
      ],
    );
    assert.equal((await core.auth.update(owner, { token: 'short', add_space_ids: 'c' })).state, 'expired');
    assert.equal((await core.auth.revoke(owner, { token: 'other' })).state, 'revoked');
    assert.equal((await core.auth.list(owner)).tokens[0]?.state, 'expired');
  });

  it('updates permissions and spaces, by replacement or by deltas, naming a token by name or hash prefix', async () => {
    const { core } = setup();
    const created = await core.auth.create(owner, { name: 'w', permissions: 'read', space_ids: 'a' });
    await core.auth.update(owner, { token: created.hash_prefix, add_space_ids: 'b,c', permissions: 'read,write' });
    await core.auth.update(owner, { token: 'w', remove_space_ids: 'a' });
    const caller = await core.auth.resolve(created.token);
    assert.deepEqual(caller.spaces === '*' ? '*' : [...caller.spaces], ['b', 'c']);
    assert.ok(caller.permissions.has('write'));
    await core.auth.update(owner, { token: 'w', space_ids: '*' });
    assert.equal((await core.auth.resolve(created.token)).spaces, '*');
    await assert.rejects(core.auth.update(owner, { token: 'w', add_space_ids: 'x' }), code('invalid_input'));
    await assert.rejects(core.auth.update(owner, { token: 'w', space_ids: 'a', add_space_ids: 'b' }), code('invalid_input'));
    await assert.rejects(core.auth.update(owner, { token: 'nobody', permissions: 'read' }), code('not_found'));
    assert.equal((await core.auth.delete(owner, { token: 'w' })).status, 'deleted');
    await assert.rejects(core.auth.resolve(created.token), code('forbidden'));
  });

  it('loses no token when many are created at once', async () => {
    const { core } = setup();
    await Promise.all(Array.from({ length: 20 }, (_, i) => core.auth.create(owner, { name: `t${i}`, permissions: 'read', space_ids: '*' })));
    assert.equal((await core.auth.list(owner)).total, 20);
  });

  it('only an admin manages tokens; a token writes notes under its own name', async () => {
    const { core } = setup();
    const writer = await core.auth.create(owner, { name: 'writer', permissions: 'read,write', space_ids: 'alpha' });
    const caller = await core.auth.resolve(writer.token);
    await assert.rejects(core.auth.create(caller, { name: 'x', permissions: 'admin', space_ids: '*' }), code('forbidden'));
    await assert.rejects(core.auth.list(caller), code('forbidden'));
    await core.spaces.create(owner, { space_id: 'alpha' });
    const note = await core.notes.write(caller, { space_id: 'alpha', category: 'todo', content: 'x', agent: 'impersonated' });
    assert.equal(note.agent, 'writer');
  });

  it('without a token: the owner, or nobody when auth is required; the bootstrap admin secret', async () => {
    assert.equal((await setup().core.auth.resolve(undefined)).agent, 'me');
    const required = setup({ required: true, adminToken: 'a'.repeat(40) });
    assert.equal(await required.core.auth.resolve(undefined), ANONYMOUS);
    await assert.rejects(required.core.spaces.list(ANONYMOUS), code('forbidden'));
    const admin = await required.core.auth.resolve('a'.repeat(40));
    assert.equal(admin.agent, 'admin');
    assert.equal((await required.core.auth.create(admin, { name: 'first', permissions: 'read', space_ids: '*' })).status, 'created');
  });
});
