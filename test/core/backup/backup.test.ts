import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cp } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { createLogger } from '../../../src/shared/log.js';
import { listKeys } from '../../../src/storage/list.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { FIRST_PLAN } from '../../../fixtures/llm/scenarios.js';
import { historyNoteNames, owner } from '../../helpers/core.js';
import { plantCompaction } from '../../helpers/plant-compaction.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { tempDir } from '../../helpers/tmp.js';

const code = (c: string) => (e: unknown) => isLiveMemError(e, c as never);
const servers: ScriptedLlm[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** Every file of a space with its bytes, for byte-for-byte comparisons. */
async function snapshot(storage: StorageDriver, spaceId: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  // The spend ledger is the space's running state, not its content: never backed up (README, Spend).
  for (const key of await listKeys(storage, `${spaceId}/`))
    if (!key.includes('/_spend/')) files.set(key.slice(spaceId.length + 1), (await storage.get(key))!.body.toString('base64'));
  return files;
}

async function populated(options: { clock?: () => Date; exportMaxBytes?: number; storage?: StorageDriver } = {}) {
  const storage = options.storage ?? createMemoryDriver();
  const llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
  servers.push(llm);
  const core = createCore({
    storage,
    llm: llm.client(),
    ...(options.clock ? { clock: options.clock } : {}),
    limits: { exportMaxBytes: options.exportMaxBytes ?? 20_000_000 },
  });
  await core.spaces.create(owner, { space_id: 'alpha', description: 'Alpha', rules: '# Rules\n\n### progress.md\nAppend-only.\n' });
  for (let i = 0; i < 12; i++) await core.notes.write(owner, { space_id: 'alpha', category: 'progress', content: `note ${i} — ünïcode ✓` });
  await core.consolidation.consolidate(owner, { space_id: 'alpha' });
  for (let i = 0; i < 3; i++) await core.notes.write(owner, { space_id: 'alpha', category: 'todo', content: `later ${i}` });
  return { core, storage };
}

describe('backups', () => {
  it('restores exactly what it backed up: rules, meta, synthesis, live, bank, history', async () => {
    const { core, storage } = await populated();
    const before = await snapshot(storage, 'alpha');
    assert.ok([...before.keys()].some((p) => p.startsWith('history/')) && [...before.keys()].some((p) => p.startsWith('bank/')));
    const backup = await core.backups.create(owner, { space_id: 'alpha', description: 'before a risky change' });
    assert.equal(backup.status, 'created');
    assert.equal(backup.files_backed_up, before.size);
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    const restored = await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.equal(restored.files_restored, before.size);
    assert.equal(restored.checksums_verified, before.size);
    assert.deepEqual(await snapshot(storage, 'alpha'), before);
    const manifest = JSON.parse((await storage.get(`_backups/${backup.backup_id}/manifest.json`))!.body.toString());
    assert.equal(manifest.format_version, 1);
    assert.equal(manifest.description, 'before a risky change');
    assert.ok(manifest.files.every((f: { sha256: string }) => /^[0-9a-f]{64}$/.test(f.sha256)));
  });

  it('never reuses an id, even for two backups in the same second', async () => {
    const { core } = await populated({ clock: () => new Date('2026-03-01T10:00:00.000Z') });
    const a = await core.backups.create(owner, { space_id: 'alpha' });
    const b = await core.backups.create(owner, { space_id: 'alpha' });
    assert.notEqual(a.backup_id, b.backup_id);
    assert.match(a.backup_id, /^alpha\/2026-03-01T10-00-00-[0-9a-z]{6}$/);
    const list = await core.backups.list(owner, {});
    assert.equal(list.total, 2);
    assert.deepEqual(
      list.backups.map((x) => x.files_count),
      [list.backups[0]!.files_count, list.backups[0]!.files_count],
    );
  });

  it('lists newest first, deletes with confirm', async () => {
    let t = Date.parse('2026-03-01T10:00:00Z');
    const { core } = await populated({ clock: () => new Date((t += 60_000)) });
    const first = await core.backups.create(owner, { space_id: 'alpha', description: 'first' });
    const second = await core.backups.create(owner, { space_id: 'alpha', description: 'second' });
    assert.deepEqual(
      (await core.backups.list(owner, { space_id: 'alpha' })).backups.map((b) => b.description),
      ['second', 'first'],
    );
    await assert.rejects(core.backups.delete(owner, { backup_id: first.backup_id }), code('invalid_input'));
    const deleted = await core.backups.delete(owner, { backup_id: first.backup_id, confirm: true });
    assert.equal(deleted.status, 'deleted');
    assert.deepEqual(
      (await core.backups.list(owner, {})).backups.map((b) => b.backup_id),
      [second.backup_id],
    );
    await assert.rejects(core.backups.delete(owner, { backup_id: first.backup_id, confirm: true }), code('not_found'));
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const { core, storage } = await populated();
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    const keys = await listKeys(storage, '');
    for (const id of [
      'alpha',
      '../alpha/2026-03-01T10-00-00-abcdef',
      'alpha/../../x',
      'alpha\\2026-03-01T10-00-00-abcdef',
      'alpha/2026-03-01T10-00-00-abcdef/extra',
      '/alpha/x',
    ]) {
      await assert.rejects(core.backups.restore(owner, { backup_id: id, confirm: true }), code('invalid_input'), id);
      await assert.rejects(core.backups.download(owner, { backup_id: id }), code('invalid_input'), id);
    }
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true }),
      (e) => code('already_exists')(e) && /delete it first/.test((e as Error).message),
    );
    await assert.rejects(core.backups.restore(owner, { backup_id: backup.backup_id }), code('invalid_input'));
    await assert.rejects(core.backups.restore(owner, { backup_id: 'alpha/2030-01-01T00-00-00-abcdef', confirm: true }), code('not_found'));
    assert.deepEqual(await listKeys(storage, ''), keys);
  });

  it('refuses a damaged backup, restoring nothing', async () => {
    const { core, storage } = await populated();
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    await storage.put(`_backups/${backup.backup_id}/files/_rules.md`, '# Tampered\n');
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true }),
      (e) => code('invalid_input')(e) && /damaged: _rules\.md does not match/.test((e as Error).message),
    );
    assert.deepEqual(await listKeys(storage, 'alpha/'), []);
  });

  it('restores into a new space with `as`: the same content under the new id, the original untouched', async () => {
    const { core, storage } = await populated();
    const before = await snapshot(storage, 'alpha');
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true }),
      (e) => code('already_exists')(e) && /delete it first, or restore the backup as a new space with as=<new_space_id>/.test((e as Error).message),
    );
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, as: 'beta' }),
      (e) => code('invalid_input')(e) && /creates space 'beta' from space 'alpha': call again with confirm=true/.test((e as Error).message),
    );
    const restored = await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true, as: 'beta' });
    assert.equal(restored.space_id, 'beta');
    assert.equal(restored.from_space, 'alpha');
    assert.equal(restored.files_restored, before.size);
    const copy = await snapshot(storage, 'beta');
    assert.deepEqual([...copy.keys()].sort(), [...before.keys()].sort());
    for (const [path, body] of before) if (path !== '_meta.json') assert.equal(copy.get(path), body, path);
    const meta = JSON.parse(Buffer.from(copy.get('_meta.json')!, 'base64').toString('utf8'));
    assert.equal(meta.space_id, 'beta');
    assert.equal((await core.spaces.info(owner, { space_id: 'beta' })).space_id, 'beta');
    assert.deepEqual(await snapshot(storage, 'alpha'), before);

    // Refused, with nothing changed: an id that exists, an invalid one, a scoped admin outside its spaces, a damaged backup.
    const keys = await listKeys(storage, '');
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true, as: 'beta' }),
      (e) => code('already_exists')(e) && /space 'beta' exists: delete it first, or pick another space id/.test((e as Error).message),
    );
    for (const bad of ['../beta', 'has space', '-x', 'x'.repeat(65)])
      await assert.rejects(core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true, as: bad }), code('invalid_input'), bad);
    const alphaAdmin = { ...owner, permissions: new Set(['read', 'write', 'admin'] as const), spaces: new Set(['alpha']), localOwner: false };
    await assert.rejects(core.backups.restore(alphaAdmin, { backup_id: backup.backup_id, confirm: true, as: 'gamma' }), code('forbidden'));
    assert.deepEqual(await listKeys(storage, ''), keys);
    await storage.put(`_backups/${backup.backup_id}/files/_rules.md`, '# Tampered\n');
    await assert.rejects(
      core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true, as: 'gamma' }),
      (e) => code('invalid_input')(e) && /damaged: _rules\.md does not match its checksum; nothing restored/.test((e as Error).message),
    );
    assert.deepEqual(await listKeys(storage, 'gamma/'), []);
  });

  it('leaves no half-restored space when the store fails mid-restore', async () => {
    const inner = createMemoryDriver();
    const { core } = await populated({ storage: inner });
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    let puts = 0;
    const failing: StorageDriver = {
      ...inner,
      put: async (key, body, options) => {
        if (key.startsWith('alpha/') && ++puts === 10) throw new Error('disk full');
        return inner.put(key, body, options);
      },
    };
    const flaky = createCore({ storage: failing });
    await assert.rejects(flaky.backups.restore(owner, { backup_id: backup.backup_id, confirm: true }), /disk full/);
    assert.deepEqual(await listKeys(inner, 'alpha/'), []);
    assert.equal((await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true })).status, 'ok');
  });

  it('downloads and exports in base64, and points large spaces to the CLI', async () => {
    const { core, storage } = await populated();
    const before = await snapshot(storage, 'alpha');
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    for (const archive of [
      await core.backups.download(owner, { backup_id: backup.backup_id }),
      await core.backups.exportBase64(owner, { space_id: 'alpha' }),
    ]) {
      const bytes = Buffer.from(archive.archive_base64, 'base64');
      assert.equal(bytes.length, archive.archive_size);
      const copy = createCore({ storage: createMemoryDriver() });
      await copy.backups.importArchive(owner, async function* () {
        yield bytes;
      });
      assert.deepEqual(await snapshot(copy.context.storage, 'alpha'), before);
    }
    const small = await populated({ exportMaxBytes: 1_000 });
    await assert.rejects(
      small.core.backups.exportBase64(owner, { space_id: 'alpha' }),
      (e) => code('invalid_input')(e) && /npx live-mem export alpha -o alpha\.tar\.gz/.test((e as Error).message),
    );
    assert.equal(await small.storage.get('alpha/_consolidation/lock.json'), null, 'the lease is released');
  });

  it('finishes a consolidation left pending before taking the snapshot', async () => {
    const storage = createMemoryDriver();
    const llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    servers.push(llm);
    const crashing = createCore({
      storage,
      llm: llm.client(),
      fault: async (point) => {
        if (point === 'after-bank-writes') throw new Error('crash');
      },
    });
    await crashing.spaces.create(owner, { space_id: 'alpha' });
    for (let i = 0; i < 5; i++) await crashing.notes.write(owner, { space_id: 'alpha', category: 'todo', content: `n${i}` });
    assert.equal((await crashing.consolidation.consolidate(owner, { space_id: 'alpha' })).status, 'partial', 'committed, not all applied');
    assert.ok(await storage.get('alpha/_consolidation/pending.json'));
    const core = createCore({ storage });
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    const manifest = JSON.parse((await storage.get(`_backups/${backup.backup_id}/manifest.json`))!.body.toString());
    const paths: string[] = manifest.files.map((f: { path: string }) => f.path);
    assert.ok(!paths.some((p) => p.startsWith('_consolidation/')));
    assert.equal(paths.filter((p) => p.startsWith('live/') && p.endsWith('.md') && !p.endsWith('.keep')).length, 0);
    assert.ok(paths.some((p) => /^history\/[^/]+\/notes\.json$/.test(p)));
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.equal((await historyNoteNames(storage, 'alpha')).length, 5, 'the backup holds the finished consolidation');
  });

  it('waits for a running consolidation instead of failing', async () => {
    const storage = createMemoryDriver();
    const llm = await startScriptedLlm([{ delayMs: 400, then: { reply: FIRST_PLAN } }]);
    servers.push(llm);
    const core = createCore({ storage, llm: llm.client() });
    await core.spaces.create(owner, { space_id: 'alpha' });
    for (let i = 0; i < 5; i++) await core.notes.write(owner, { space_id: 'alpha', category: 'todo', content: `n${i}` });
    const consolidating = core.consolidation.consolidate(owner, { space_id: 'alpha' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    assert.equal((await consolidating).status, 'ok');
    const manifest = JSON.parse((await storage.get(`_backups/${backup.backup_id}/manifest.json`))!.body.toString());
    assert.ok(
      manifest.files.some((f: { path: string }) => /^history\/[^/]+\/notes\.json$/.test(f.path)),
      'taken after the consolidation, never during',
    );
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.equal((await historyNoteNames(storage, 'alpha')).length, 5);
  });
});

/** Adds `path` to a stored backup, files and manifest alike, with a right checksum: a tampered backup only the content check catches. */
async function plant(storage: StorageDriver, backupId: string, path: string, body: string): Promise<void> {
  const key = `_backups/${backupId}/manifest.json`;
  const manifest = JSON.parse((await storage.get(key))!.body.toString());
  manifest.files = manifest.files.filter((f: { path: string }) => f.path !== path);
  manifest.files.push({ path, size: Buffer.byteLength(body), sha256: createHash('sha256').update(body).digest('hex') });
  await storage.put(`_backups/${backupId}/files/${path}`, body);
  await storage.put(key, JSON.stringify(manifest));
}

/** Imports an export of `spaceId` into a fresh store; returns that store. */
async function exportImport(core: ReturnType<typeof createCore>, spaceId: string): Promise<StorageDriver> {
  const { stream } = await core.backups.exportStream(owner, spaceId);
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  const copy = createCore({ storage: createMemoryDriver() });
  await copy.backups.importArchive(owner, async function* () {
    yield Buffer.concat(chunks);
  });
  return copy.context.storage;
}

describe("a backup holds a space's content and nothing else", () => {
  const lease = JSON.stringify({ owner: 'x', token: 'x', acquired_at: '2026-01-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z' });
  for (const [path, body, message] of [
    [
      '_consolidation/pending.json',
      JSON.stringify({ id: 'x', space_id: 'victim', writes: [] }),
      /_consolidation\/pending\.json is internal state \(a pending consolidation commit\)/,
    ],
    ['_consolidation/lock.json', lease, /_consolidation\/lock\.json is internal state \(a consolidation lease\)/],
    ['_index/bm25-v1.json', '{}', /_index\/bm25-v1\.json is internal state \(a search index snapshot\)/],
    ['bank/sub/planted.md', 'x', /bank\/sub\/planted\.md is not a bank file/],
    ['_meta.json', '{ garbage', /_meta\.json is not JSON/],
  ] as const) {
    it(`refuses to restore a backup tampered with ${path}, restoring nothing`, async () => {
      const { core, storage } = await populated();
      await core.spaces.create(owner, { space_id: 'victim' });
      const backup = await core.backups.create(owner, { space_id: 'alpha' });
      await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
      await plant(storage, backup.backup_id, path, body);
      const victim = await listKeys(storage, 'victim/');
      await assert.rejects(
        core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true }),
        (e) => code('invalid_input')(e) && /is damaged: /.test((e as Error).message) && message.test((e as Error).message),
      );
      assert.deepEqual(await listKeys(storage, 'alpha/'), []);
      assert.deepEqual(await listKeys(storage, 'victim/'), victim);
    });
  }

  it('leaves internal state and stray files out of backups and exports, so every one restores and imports', async () => {
    const lines: string[] = [];
    const storage = createMemoryDriver();
    const { core } = await populated({ storage });
    const logged = createCore({ storage, logger: createLogger('warn', (line) => void lines.push(line)) });
    const all = await listKeys(storage, 'alpha/');
    const content = all.filter((key) => !key.startsWith('alpha/_spend/'));
    assert.ok(all.length > content.length, 'the consolidation left its spend record');
    await storage.put('alpha/_index/bm25-v1.json', '{}');
    await storage.put('alpha/_summaries/lock.json', lease);
    await storage.put('alpha/notes.txt', 'put there by hand');
    await storage.put('alpha/bank/sub/nested.md', 'a folder in the bank');
    const backup = await logged.backups.create(owner, { space_id: 'alpha' });
    assert.equal(backup.files_backed_up, content.length);
    assert.ok(lines.some((line) => line.includes('notes.txt is not part of a space')));
    assert.ok(lines.some((line) => line.includes('bank/sub/nested.md is not a bank file')));
    assert.ok(!lines.some((line) => /_index|lock\.json|_spend/.test(line)), 'internal state is left out silently');
    const imported = await exportImport(logged, 'alpha');
    assert.deepEqual(await listKeys(imported, 'alpha/'), content);
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.deepEqual(await listKeys(storage, 'alpha/'), content);
  });

  it("carries a compaction's pre-images: a backup restores them and an export imports them, found again by memory_search", async () => {
    const lines: string[] = [];
    const storage = createMemoryDriver();
    const { core } = await populated({ storage });
    const section = { filename: 'progress.md', path: ['Progress'], content: '# Progress\n\n- the cormorant release\n' };
    await plantCompaction(storage, 'alpha', { id: '20990101T000000-cmp001', committed_at: '2099-01-01T00:00:00.000Z', sections: [section] });
    const logged = createCore({ storage, logger: createLogger('warn', (line) => void lines.push(line)) });
    const content = (await listKeys(storage, 'alpha/')).filter((key) => !key.startsWith('alpha/_spend/'));
    assert.ok(content.includes('alpha/history/20990101T000000-cmp001/preimages.json'));
    const backup = await logged.backups.create(owner, { space_id: 'alpha' });
    assert.equal(backup.files_backed_up, content.length);
    assert.deepEqual(lines, [], 'nothing left out');
    const imported = await exportImport(logged, 'alpha');
    assert.deepEqual(await listKeys(imported, 'alpha/'), content);
    const found = await createCore({ storage: imported }).recall.search(owner, { space_id: 'alpha', query: 'cormorant' });
    assert.equal(found.results[0]?.source, 'bank_history');
    await core.spaces.delete(owner, { space_id: 'alpha', confirm: true });
    await core.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.deepEqual(await listKeys(storage, 'alpha/'), content);
  });

  it('keeps bank files stored under names new plans may no longer use (CON.md, a long name): they are the user’s content', async () => {
    const storage = createMemoryDriver();
    const { core } = await populated({ storage });
    await storage.put('alpha/bank/CON.md', '# written by an older version\n');
    await storage.put(`alpha/bank/${'a'.repeat(240)}.md`, '# a long name\n');
    const content = (await listKeys(storage, 'alpha/')).filter((key) => !key.startsWith('alpha/_spend/'));
    const backup = await core.backups.create(owner, { space_id: 'alpha' });
    assert.equal(backup.files_backed_up, content.length);
    const imported = await exportImport(core, 'alpha');
    assert.deepEqual(await listKeys(imported, 'alpha/'), content);
  });

  it('exports and imports a space written by the Python server, .keep sentinels included', async () => {
    const tmp = await tempDir();
    try {
      await cp(fileURLToPath(new URL('../../../fixtures/python-bucket', import.meta.url)), tmp.dir, { recursive: true });
      const source = createFsDriver(tmp.dir);
      const imported = await exportImport(createCore({ storage: source }), 'projet-alpha');
      const files = await listKeys(source, 'projet-alpha/');
      assert.ok(files.includes('projet-alpha/live/.keep') && files.includes('projet-alpha/bank/.keep'));
      assert.deepEqual(await listKeys(imported, 'projet-alpha/'), files);
      for (const key of files) assert.deepEqual((await imported.get(key))!.body, (await source.get(key))!.body, key);
    } finally {
      await tmp.remove();
    }
  });
});
