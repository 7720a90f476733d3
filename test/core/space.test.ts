import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Caller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { projectSpace } from '../../src/core/space/project-space.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { makeCore, owner } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';

const code = (c: string) => (e: unknown) => isLiveMemError(e, c as never);

describe('spaces', () => {
  it('creates the layout of the Python server and refuses a second create', async () => {
    const { core, storage } = makeCore();
    const created = await core.spaces.create(owner, { space_id: 'alpha', description: 'd', rules: '# R\n' });
    assert.equal(created.status, 'created');
    assert.equal(created.rules_size, 4);
    assert.deepEqual(await listKeys(storage, 'alpha/'), ['alpha/_meta.json', 'alpha/_rules.md', 'alpha/bank/.keep', 'alpha/live/.keep']);
    const meta = JSON.parse((await storage.get('alpha/_meta.json'))!.body.toString());
    assert.equal(meta.consolidation_count, 0);
    assert.equal(meta.last_consolidation, null);
    await assert.rejects(core.spaces.create(owner, { space_id: 'alpha' }), code('already_exists'));
  });

  it('stores rules given with \\r\\n, \\r or a byte-order mark with \\n line endings', async () => {
    const { core, storage } = makeCore();
    for (const [i, rules] of [
      '# R\r\n\r\n### a.md\r\nAppend-only.\r\n',
      '# R\r\r### a.md\rAppend-only.\r',
      '\uFEFF# R\n\n### a.md\nAppend-only.\n',
    ].entries()) {
      await core.spaces.create(owner, { space_id: `crlf${i}`, rules });
      assert.equal((await storage.get(`crlf${i}/_rules.md`))?.body.toString('utf8'), '# R\n\n### a.md\nAppend-only.\n');
    }
  });

  it('lets exactly one of many racing creators create a space', async () => {
    const { core } = makeCore();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => core.spaces.create(owner, { space_id: 'race', description: `${i}` })));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.ok(results.every((r) => r.status === 'fulfilled' || code('already_exists')(r.reason)));
  });

  it('loses no update when several writers update the meta at once', async () => {
    const { core } = makeCore();
    await core.spaces.create(owner, { space_id: 'm' });
    await Promise.all([core.spaces.update(owner, { space_id: 'm', description: 'new' }), core.spaces.update(owner, { space_id: 'm', owner: 'team' })]);
    const info = await core.spaces.info(owner, { space_id: 'm' });
    assert.equal(info.description, 'new');
    assert.equal(info.owner, 'team');
  });

  it('deletes everything of a space, and nothing of another', async () => {
    const { core, storage } = makeCore();
    await core.spaces.create(owner, { space_id: 'a' });
    await core.spaces.create(owner, { space_id: 'a-b' });
    await core.notes.write(owner, { space_id: 'a', category: 'todo', content: 'x' });
    await assert.rejects(core.spaces.delete(owner, { space_id: 'a' }), code('invalid_input'));
    const deleted = await core.spaces.delete(owner, { space_id: 'a', confirm: true });
    assert.equal(deleted.files_deleted, 5);
    assert.deepEqual(await listKeys(storage, 'a/'), []);
    assert.equal((await core.spaces.list(owner)).total, 1);
    await assert.rejects(core.spaces.delete(owner, { space_id: 'a', confirm: true }), code('not_found'));
  });

  it('lists, describes and summarises spaces', async () => {
    const { core, storage } = makeCore();
    await core.spaces.create(owner, { space_id: 's1', description: 'first' });
    await core.notes.write(owner, { space_id: 's1', category: 'todo', content: 'hello' });
    await storage.put('s1/bank/activeContext.md', '# Active\n');
    await storage.put('s1/_synthesis.md', 'So far: hello.');
    await storage.put('not-a-space/x.md', 'stray');
    const list = await core.spaces.list(owner);
    assert.deepEqual(
      list.spaces.map((s) => [s.space_id, s.live_notes_count, s.bank_files_count]),
      [['s1', 1, 1]],
    );
    const info = await core.spaces.info(owner, { space_id: 's1' });
    assert.equal(info.live.notes_count, 1);
    assert.ok(info.live.total_size > 0);
    assert.deepEqual(info.bank.files, ['activeContext.md']);
    assert.equal(info.synthesis_exists, true);
    const summary = await core.spaces.summary(owner, { space_id: 's1' });
    assert.equal(summary.synthesis, 'So far: hello.');
    assert.equal(summary.files[0]?.content, '# Active\n');
  });
});

describe('bank', () => {
  it('reads one file, all files, and truncates past the cap with a flag', async () => {
    const { core, storage } = makeCore({ limits: { bankReadAllMaxBytes: 2500 } });
    await core.spaces.create(owner, { space_id: 'b' });
    for (const name of ['a.md', 'b.md', 'c.md']) await storage.put(`b/bank/${name}`, 'x'.repeat(1000));
    await storage.put('b/bank/notes.txt', 'not markdown');
    const all = await core.bank.readAllFor(owner, { space_id: 'b' });
    assert.deepEqual(
      all.files.map((f) => f.filename),
      ['a.md', 'b.md'],
    );
    assert.equal(all.truncated, true);
    assert.deepEqual(all.omitted_files, ['c.md']);
    const list = await core.bank.list(owner, { space_id: 'b' });
    assert.deepEqual(
      list.files.map((f) => f.filename),
      ['a.md', 'b.md', 'c.md'],
    );
    const one = await core.bank.read(owner, { space_id: 'b', filename: 'c.md' });
    assert.equal(one.size, 1000);
    // Bank names are NFC: a decomposed name finds the file, and a file an older version stored decomposed is found by its listed name.
    await storage.put('b/bank/caf\u00e9.md', 'composed');
    await storage.put('b/bank/the\u0301.md', 'decomposed');
    assert.equal((await core.bank.read(owner, { space_id: 'b', filename: 'cafe\u0301.md' })).content, 'composed');
    assert.equal((await core.bank.read(owner, { space_id: 'b', filename: 'the\u0301.md' })).content, 'decomposed');
    for (const filename of ['../_meta.json', 'a/b.md', 'a\\b.md', '..md', 'x\u200b.md', 'readme.txt', '']) {
      await assert.rejects(core.bank.read(owner, { space_id: 'b', filename }), code('invalid_input'), filename);
    }
    // Names a plan may no longer create are still read: a bank an older version wrote is the user's.
    for (const filename of ['CON.md', 'x:y.md', `${'a'.repeat(240)}.md`]) {
      await assert.rejects(core.bank.read(owner, { space_id: 'b', filename }), code('not_found'), filename);
      await storage.put(`b/bank/${filename}`, `stored as ${filename}`);
      assert.equal((await core.bank.read(owner, { space_id: 'b', filename })).content, `stored as ${filename}`);
    }
  });
});

describe('the guard', () => {
  const reader: Caller = { agent: 'r', permissions: new Set(['read']), spaces: new Set(['open']), canChooseAgent: false };

  it('refuses what a caller may not do, before revealing whether a space exists', async () => {
    const { core } = makeCore();
    await core.spaces.create(owner, { space_id: 'open' });
    await core.spaces.create(owner, { space_id: 'closed' });
    await core.notes.read(reader, { space_id: 'open' });
    await assert.rejects(core.notes.write(reader, { space_id: 'open', category: 'todo', content: 'x' }), code('forbidden'));
    await assert.rejects(core.notes.read(reader, { space_id: 'closed' }), code('forbidden'));
    await assert.rejects(core.notes.read(reader, { space_id: 'ghost' }), code('forbidden'));
    await assert.rejects(core.spaces.delete(reader, { space_id: 'open', confirm: true }), code('forbidden'));
    assert.deepEqual(
      (await core.spaces.list(reader)).spaces.map((s) => s.space_id),
      ['open'],
    );
  });
});

describe('compatibility with the Python Live Memory bucket', () => {
  it('opens a space written by the Python server as it is', async () => {
    const tmp = await tempDir();
    try {
      await cp(fileURLToPath(new URL('../../fixtures/python-bucket', import.meta.url)), tmp.dir, { recursive: true });
      const core = createCore({ storage: createFsDriver(tmp.dir) });
      const info = await core.spaces.info(owner, { space_id: 'projet-alpha' });
      assert.equal(info.description, 'Projet de refonte API');
      assert.equal(info.consolidation_count, 3);
      assert.equal(info.live.notes_count, 2);
      assert.deepEqual(info.bank.files, ['activeContext.md', 'progress.md']);
      const read = await core.notes.read(owner, { space_id: 'projet-alpha' });
      assert.deepEqual(
        read.notes.map((n) => [n.agent, n.category]),
        [
          ['claude_desktop', 'decision'],
          ['cline-dev', 'observation'],
        ],
      );
      assert.equal(read.notes[1]?.content, "Le module d'authentification fonctionne correctement.\nLes tests passent avec les tokens Bearer.\n");
      assert.equal((await core.notes.read(owner, { space_id: 'projet-alpha', agent: 'claude_desktop' })).total, 1);
      assert.equal((await core.notes.read(owner, { space_id: 'projet-alpha', agent: 'claude' })).total, 0, 'never by substring');
      const written = await core.notes.write(owner, { space_id: 'projet-alpha', category: 'todo', content: 'new' });
      assert.equal((await core.notes.read(owner, { space_id: 'projet-alpha', limit: 1 })).notes[0]?.filename, written.filename);
      const meta = await core.spaces.update(owner, { space_id: 'projet-alpha', description: 'changed' });
      assert.equal(meta.description, 'changed');
      const raw = JSON.parse((await createFsDriver(tmp.dir).get('projet-alpha/_meta.json'))!.body.toString());
      assert.equal(raw.version, 1, 'unknown fields are kept');
    } finally {
      await tmp.remove();
    }
  });
});

describe("a project's space: its own, or an older one bound to it (project-space.ts)", () => {
  const claim = { space_id: 'acme-webapp-abcdefghij', project: 'github.com/acme/webapp', legacy_id: 'webapp' };
  const mallory = { space_id: 'mallory-webapp-klmnopqrst', project: 'evil.example.org/mallory/webapp', legacy_id: 'webapp' };

  it('is its own id when no older space exists, and once its own exists', async () => {
    const { core } = makeCore();
    assert.deepEqual(await projectSpace(core.context, claim), { space_id: claim.space_id, exists: false });
    await core.spaces.create(owner, { space_id: 'webapp' });
    await core.spaces.create(owner, { space_id: claim.space_id, project: claim.project });
    assert.deepEqual(await projectSpace(core.context, claim), { space_id: claim.space_id, exists: true });
  });

  it('refuses while an older space records no project, naming the choice; uses it once bound; leaves it to its project', async () => {
    const { core } = makeCore();
    await core.spaces.create(owner, { space_id: 'webapp' });
    await assert.rejects(projectSpace(core.context, claim), (error: unknown) => {
      assert.ok(isLiveMemError(error, 'conflict'));
      for (const said of [
        "now maps to the space 'acme-webapp-abcdefghij'",
        "older space 'webapp'",
        'live-mem space bind webapp',
        'live-mem space bind --new',
        'space_id',
      ])
        assert.ok(error.message.includes(said), `${said}: ${error.message}`);
      return true;
    });
    await assert.rejects(projectSpace(core.context, mallory), code('conflict'), "a stranger's clone is refused too, never handed the space");

    const bound = await core.spaces.bindProject(owner, { space_id: 'webapp', project: claim.project });
    assert.deepEqual([bound.project, bound.changed], [claim.project, true]);
    const ours = await projectSpace(core.context, claim);
    assert.deepEqual([ours.space_id, ours.exists], ['webapp', true]);
    assert.match(String(ours.older), /older space 'webapp'/);
    // Another project's clone of the same name gets its own space, silently.
    assert.deepEqual(await projectSpace(core.context, mallory), { space_id: mallory.space_id, exists: false });
    // Bound to one project, a space is not bound to another.
    await assert.rejects(core.spaces.bindProject(owner, { space_id: 'webapp', project: mallory.project }), code('invalid_input'));
    assert.equal((await core.spaces.bindProject(owner, { space_id: 'webapp', project: claim.project })).changed, false, 'again: no change');
  });

  it('a project without an older id (a folder) is its own id, reading nothing', async () => {
    const { core } = makeCore();
    assert.deepEqual(await projectSpace(core.context, { space_id: 'plain-dir' }), { space_id: 'plain-dir', exists: false });
  });
});

describe('an older space bound to a project, found from every spelling of its remote', () => {
  it('`WebApp` in a URL finds the `webapp` space bound to the project, and the bound space comes before its own', async () => {
    const { core } = makeCore();
    const project = 'github.com/acme/webapp';
    await core.spaces.create(owner, { space_id: 'webapp', project });
    await core.spaces.create(owner, { space_id: 'acme-webapp-abcdefghij', project });
    for (const legacy of ['webapp', 'WebApp', 'WEBAPP'])
      assert.equal((await projectSpace(core.context, { space_id: 'acme-webapp-abcdefghij', project, legacy_id: legacy })).space_id, 'webapp', legacy);
  });
});
