/**
 * Backups, export and import end to end: the CLI as processes, the MCP server the binary serves (in
 * this process), fs and radosgw. (An export by the packed package run with npx: install.test.ts.)
 */
import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { historyNoteNames } from '../helpers/core.js';
import { craftTarGz, validSpaceEntries, writeArchiveWithLargeEntry } from '../helpers/craft-archive.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');

interface Store {
  env: Record<string, string>;
  storage: StorageDriver;
  cleanup(): Promise<void>;
}

const fsStore = async (): Promise<Store> => {
  const home = await tempDir();
  return { env: { LIVE_MEM_HOME: home.dir }, storage: createFsDriver(home.dir), cleanup: home.remove };
};

const s3 = requireS3OrSkip('backups on S3');
const s3Store = async (): Promise<Store> => {
  if (!s3) throw new Error('no S3');
  const harness = await makeS3Harness();
  return { env: s3ProcessEnv(s3, harness.prefix), storage: harness.driver, cleanup: harness.cleanup };
};

const cli = (env: Record<string, string>, args: string[], cwd?: string) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
    ...(cwd ? { cwd } : {}),
  });

/** Every file of a space, as bytes, but its running state (job records, the spend ledger), which archives leave out. */
async function snapshot(storage: StorageDriver, spaceId: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const key of await listKeys(storage, `${spaceId}/`)) {
    if (!key.includes('/_consolidation/') && !key.includes('/_spend/'))
      files.set(key.slice(spaceId.length + 1), (await storage.get(key))!.body.toString('base64'));
  }
  return files;
}

/** A space with notes, a consolidated bank and history, and notes written after. */
async function populate(storage: StorageDriver, llm: ScriptedLlm, spaceId = 'alpha'): Promise<void> {
  const core = createCore({ storage, llm: llm.client() });
  await core.spaces.create(owner, { space_id: spaceId, description: 'to move around' });
  for (let i = 0; i < 20; i++)
    await core.notes.write(owner, { space_id: spaceId, category: 'decision', content: `decision ${i}: ünïcödé ✓ ${'x'.repeat(i * 50)}`, tags: 'a,b' });
  assert.equal((await core.consolidation.consolidate(owner, { space_id: spaceId })).status, 'ok');
  for (let i = 0; i < 5; i++) await core.notes.write(owner, { space_id: spaceId, category: 'todo', content: `todo ${i}` });
}

describe('export and import', () => {
  let llm: ScriptedLlm;
  let work: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    work = await tempDir('live-mem-archives');
  });
  after(async () => {
    await llm?.close();
    await work?.remove();
  });

  const roundTrip = (label: string, from: () => Promise<Store>, to: () => Promise<Store>) =>
    it(`gives byte-identical files: ${label}`, async () => {
      const source = await from();
      const target = await to();
      try {
        await populate(source.storage, llm);
        const archive = path.join(work.dir, `${label.replace(/\W+/g, '-')}.tar.gz`);
        const exported = await cli(source.env, ['export', 'alpha', '-o', archive, '--json']);
        assert.equal(exported.exitCode, 0, exported.stderr);
        assert.equal(JSON.parse(exported.stdout).files_count, (await snapshot(source.storage, 'alpha')).size);
        const imported = await cli(target.env, ['import', archive, '--json']);
        assert.equal(imported.exitCode, 0, imported.stderr);
        assert.deepEqual(await snapshot(target.storage, 'alpha'), await snapshot(source.storage, 'alpha'));
        const again = await cli(target.env, ['import', archive]);
        assert.equal(again.exitCode, 1);
        assert.match(again.stderr, /exists: delete it first/);
        const renamed = await cli(target.env, ['import', archive, '--as', 'beta']);
        assert.equal(renamed.exitCode, 0, renamed.stderr);
        assert.equal((await createCore({ storage: target.storage }).notes.read(owner, { space_id: 'beta' })).total, 5);
      } finally {
        await source.cleanup();
        await target.cleanup();
      }
    });

  roundTrip('fs to fs', fsStore, fsStore);
  if (s3) {
    roundTrip('radosgw to radosgw', s3Store, s3Store);
    it('gives byte-identical files across drivers: fs → S3 → fs', async () => {
      const [first, middle, last] = [await fsStore(), await s3Store(), await fsStore()];
      try {
        await populate(first.storage, llm);
        const one = path.join(work.dir, 'one.tar.gz');
        const two = path.join(work.dir, 'two.tar.gz');
        assert.equal((await cli(first.env, ['export', 'alpha', '-o', one])).exitCode, 0);
        assert.equal((await cli(middle.env, ['import', one])).exitCode, 0);
        assert.equal((await cli(middle.env, ['export', 'alpha', '-o', two])).exitCode, 0);
        assert.equal((await cli(last.env, ['import', two])).exitCode, 0);
        const original = await snapshot(first.storage, 'alpha');
        assert.deepEqual(await snapshot(middle.storage, 'alpha'), original);
        assert.deepEqual(await snapshot(last.storage, 'alpha'), original);
      } finally {
        await Promise.all([first.cleanup(), middle.cleanup(), last.cleanup()]);
      }
    });
  }

  it('streams an export to stdout with -o -', async () => {
    const store = await fsStore();
    try {
      await populate(store.storage, llm);
      const run = await execa(process.execPath, [BIN, 'export', 'alpha', '-o', '-'], { env: { ...store.env, LIVE_MEM_LOG_LEVEL: 'warn' }, encoding: 'buffer' });
      const listed = await execa('tar', ['tz'], { input: run.stdout });
      assert.match(listed.stdout, /^alpha\/_meta\.json$/m);
      assert.match(listed.stdout, /^manifest\.json$/m);
      assert.match(listed.stdout, /^alpha\/history\/[^/]+\/notes\.json$/m);
    } finally {
      await store.cleanup();
    }
  });
});

describe('crafted archives, imported by the CLI', () => {
  let work: Awaited<ReturnType<typeof tempDir>>;
  let probe: string;
  before(async () => {
    work = await tempDir('live-mem-crafted');
    // Preloaded into the CLI process: its peak resident memory, written when it exits.
    probe = path.join(work.dir, 'max-rss.cjs');
    await writeFile(
      probe,
      "process.on('exit', () => require('node:fs').writeFileSync(process.env.MAX_RSS_FILE, String(process.resourceUsage().maxRSS * 1024)));\n",
    );
  });
  after(() => work?.remove());

  /** `live-mem import` with the peak memory of its process, in bytes. */
  const importMeasured = async (env: Record<string, string>, archive: string) => {
    const rssFile = path.join(work.dir, `rss-${path.basename(archive)}`);
    const run = await execa(process.execPath, ['--require', probe, BIN, 'import', archive], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', MAX_RSS_FILE: rssFile, ...env },
      extendEnv: false,
      reject: false,
    });
    return { ...run, maxRss: Number(await readFile(rssFile, 'utf8')) };
  };
  const save = async (name: string, bytes: Buffer) => {
    const file = path.join(work.dir, name);
    await writeFile(file, bytes);
    return file;
  };
  /** Every file and folder name in the store, but the CLI's own `_system/`. */
  const storeFiles = async (store: Store) =>
    (await readdir(store.env.LIVE_MEM_HOME as string, { recursive: true })).filter((p) => !p.startsWith('_system')).sort();

  it('refuses a pending commit naming another space (exit 2): nothing written, and that space untouched', async () => {
    const store = await fsStore();
    try {
      assert.equal((await cli(store.env, ['space', 'create', 'victim'])).exitCode, 0);
      for (let i = 0; i < 3; i++) assert.equal((await cli(store.env, ['note', 'victim', `victim note ${i}`])).exitCode, 0);
      const victim = await snapshot(store.storage, 'victim');
      const files = await storeFiles(store);
      const notes = [...victim.keys()].filter((p) => p.startsWith('live/') && p.endsWith('.md')).map((p) => path.basename(p));
      const pending = {
        id: '20260101T000000-aaaaaa',
        space_id: 'victim',
        committed_at: '2026-01-01T00:00:00Z',
        notes,
        time_range: { oldest: null, newest: null },
        writes: [{ filename: 'planted.md', content: 'planted by an archive', expectedEtag: null, kind: 'created' }],
        synthesis: { content: 'planted by an archive', expectedEtag: null },
        metrics: {},
      };
      const archive = await save(
        'pending.tar.gz',
        craftTarGz(validSpaceEntries('crafted', (all) => void all.push({ path: '_consolidation/pending.json', body: JSON.stringify(pending) }))),
      );
      const imported = await cli(store.env, ['import', archive]);
      assert.equal(imported.exitCode, 2, imported.stderr);
      assert.match(
        imported.stderr,
        /invalid archive: "crafted\/_consolidation\/pending\.json" is internal state \(a pending consolidation commit\): live-mem exports and backups never carry it/,
      );
      // The operations that would have applied it: the space is not there to export or back up.
      assert.equal((await cli(store.env, ['export', 'crafted', '-o', path.join(work.dir, 'out.tar.gz')])).exitCode, 1);
      assert.equal((await cli(store.env, ['backup', 'create', 'crafted'])).exitCode, 1);
      assert.deepEqual(await storeFiles(store), files);
      assert.deepEqual(await snapshot(store.storage, 'victim'), victim);
    } finally {
      await store.cleanup();
    }
  });

  it('refuses a lease held until 2099 (exit 2), writing nothing', async () => {
    const store = await fsStore();
    try {
      const lease = { owner: 'intruder', token: 'x', acquired_at: '2026-01-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z' };
      const archive = await save(
        'lease.tar.gz',
        craftTarGz(validSpaceEntries('crafted', (all) => void all.push({ path: '_consolidation/lock.json', body: JSON.stringify(lease) }))),
      );
      const files = await storeFiles(store);
      const imported = await cli(store.env, ['import', archive]);
      assert.equal(imported.exitCode, 2, imported.stderr);
      assert.match(imported.stderr, /"crafted\/_consolidation\/lock\.json" is internal state \(a consolidation lease\)/);
      assert.deepEqual(await storeFiles(store), files);
    } finally {
      await store.cleanup();
    }
  });

  it('refuses an archive whose _meta.json is not JSON as an invalid archive (exit 2), writing nothing', async () => {
    const store = await fsStore();
    try {
      const archive = await save('meta.tar.gz', craftTarGz(validSpaceEntries('crafted', (all) => void ((all[0] as { body: string }).body = '{ not json'))));
      const files = await storeFiles(store);
      const imported = await cli(store.env, ['import', archive]);
      assert.equal(imported.exitCode, 2, imported.stderr);
      assert.match(imported.stderr, /invalid archive: _meta\.json is not JSON/);
      assert.doesNotMatch(imported.stderr, /unexpected error/);
      assert.deepEqual(await storeFiles(store), files);
    } finally {
      await store.cleanup();
    }
  });

  it('refuses a 9.4 MB archive holding a 2 GiB entry (exit 2) without holding it in memory', async () => {
    const store = await fsStore();
    try {
      const archive = path.join(work.dir, 'bomb.tar.gz');
      await writeArchiveWithLargeEntry(archive, { path: 'history/20260101T000000-aaaaaa/notes.json', size: 2 * 1024 ** 3 });
      assert.ok((await stat(archive)).size < 10_000_000);
      const files = await storeFiles(store);
      const imported = await importMeasured(store.env, archive);
      assert.equal(imported.exitCode, 2, imported.stderr);
      assert.match(
        imported.stderr,
        /invalid archive: "crafted\/history\/20260101T000000-aaaaaa\/notes\.json" holds 2147483648 bytes, more than the 256000000 an entry may hold: raise LIVE_MEM_IMPORT_MAX_ENTRY_BYTES to import it/,
      );
      assert.deepEqual(await storeFiles(store), files);
      assert.ok(imported.maxRss < 256 * 1024 ** 2, `peak memory ${imported.maxRss} bytes`);
    } finally {
      await store.cleanup();
    }
  });

  it('keeps the caps set in the environment', async () => {
    const store = await fsStore();
    try {
      const archive = path.join(work.dir, 'large.tar.gz');
      await writeArchiveWithLargeEntry(archive, { path: 'history/20260101T000000-aaaaaa/notes.json', size: 64 * 1024 ** 2 });
      const files = await storeFiles(store);
      const capped = await importMeasured({ ...store.env, LIVE_MEM_IMPORT_MAX_ENTRY_BYTES: '1000000' }, archive);
      assert.equal(capped.exitCode, 2, capped.stderr);
      assert.match(capped.stderr, /holds 67108864 bytes, more than the 1000000 an entry may hold: raise LIVE_MEM_IMPORT_MAX_ENTRY_BYTES/);
      assert.ok(capped.maxRss < 256 * 1024 ** 2, `peak memory ${capped.maxRss} bytes`);
      const total = await cli({ ...store.env, LIVE_MEM_IMPORT_MAX_BYTES: '60000000' }, ['import', archive]);
      assert.equal(total.exitCode, 2, total.stderr);
      assert.match(
        total.stderr,
        /more than 60000000 bytes once uncompressed \(reached at "crafted\/history\/20260101T000000-aaaaaa\/notes\.json"\): raise LIVE_MEM_IMPORT_MAX_BYTES/,
      );
      assert.deepEqual(await storeFiles(store), files);
      const fits = await cli(store.env, ['import', archive, '--json']);
      assert.equal(fits.exitCode, 0, fits.stderr);
      assert.equal(JSON.parse(fits.stdout).files_restored, 4);
    } finally {
      await store.cleanup();
    }
  });
});

describe('a backup taken while other processes write notes and consolidate', () => {
  it('is consistent with its manifest, and restores to a consistent space', async () => {
    const store = await fsStore();
    const slow = await startScriptedLlm([{ delayMs: 1_000, then: { reply: FIRST_PLAN } }]);
    try {
      const core = createCore({ storage: store.storage });
      await core.spaces.create(owner, { space_id: 'busy' });
      for (let i = 0; i < 30; i++) await core.notes.write(owner, { space_id: 'busy', category: 'progress', content: `seed ${i}` });
      const writer = await inProcessServer({ ...store.env, LIVE_MEM_LOG_LEVEL: 'warn' });
      let writing = true;
      const writes = (async () => {
        for (let i = 0; writing; i++) await writer.call('live_note', { space_id: 'busy', category: 'todo', content: `during ${i}` });
      })();
      const env = { ...store.env, LIVE_MEM_LLM_BASE_URL: slow.url, LIVE_MEM_LLM_MODEL: 'm' };
      const consolidating = cli(env, ['consolidate', 'busy', '-q', '--json']);
      // Start the backup once the consolidation holds the space's lease (however slow its start).
      for (let i = 0; i < 200 && !(await store.storage.stat('busy/_consolidation/lock.json')); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      const backup = await cli(store.env, ['backup', 'create', 'busy', '-d', 'during the storm', '--json']);
      writing = false;
      await writes;
      await writer.close();
      const consolidated = await consolidating;
      assert.equal(consolidated.exitCode, 0, consolidated.stderr);
      assert.equal(backup.exitCode, 0, backup.stderr);
      const backupId = JSON.parse(backup.stdout).backup_id as string;

      // Restore it under another name through download + import: every checksum is verified on the way.
      const archive = path.join(store.env.LIVE_MEM_HOME as string, 'busy.tar.gz');
      assert.equal((await cli(store.env, ['backup', 'download', backupId, '-o', archive])).exitCode, 0);
      const restored = await cli(store.env, ['import', archive, '--as', 'busy-copy', '--json']);
      assert.equal(restored.exitCode, 0, restored.stderr);
      const manifest = JSON.parse(await readFile(path.join(store.env.LIVE_MEM_HOME as string, '_backups', backupId, 'manifest.json'), 'utf8'));
      assert.equal(JSON.parse(restored.stdout).checksums_verified, manifest.files.length);

      // No half-consolidated state: every note is in live/ or in history, once; the counters agree.
      const paths: string[] = manifest.files.map((f: { path: string }) => f.path);
      const live = paths.filter((p) => p.startsWith('live/') && p.endsWith('.md')).map((p) => path.basename(p));
      const history = await historyNoteNames(store.storage, 'busy-copy'); // the restored copy: checksums verified against the backup
      assert.equal(new Set([...live, ...history]).size, live.length + history.length, 'no note in both places');
      const meta = JSON.parse(await readFile(path.join(store.env.LIVE_MEM_HOME as string, '_backups', backupId, 'files', '_meta.json'), 'utf8'));
      assert.equal(meta.total_notes_processed, history.length);
      assert.equal(history.length, JSON.parse(consolidated.stdout).notes_processed, 'the backup waited for the consolidation');
      assert.ok(history.length >= 30 && live.length > 0);
      assert.ok(!paths.some((p) => p.startsWith('_consolidation/')));
    } finally {
      await slow.close();
      await store.cleanup();
    }
  });
});

describe('backup restore --as: a backup into a new space, with the CLI', () => {
  let llm: ScriptedLlm;
  before(async () => {
    llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
  });
  after(async () => llm?.close());

  const restoreAs = (label: string, make: () => Promise<Store>) =>
    it(`restores beside the space, refuses a taken or invalid id and a damaged backup, changing nothing: ${label}`, async () => {
      const store = await make();
      try {
        await populate(store.storage, llm);
        assert.equal((await cli(store.env, ['space', 'create', 'taken'])).exitCode, 0);
        const before = await snapshot(store.storage, 'alpha');
        const taken = await snapshot(store.storage, 'taken');
        const backupId = JSON.parse((await cli(store.env, ['backup', 'create', 'alpha', '--json'])).stdout).backup_id as string;

        const onto = await cli(store.env, ['backup', 'restore', backupId, '--yes']);
        assert.equal(onto.exitCode, 1);
        assert.match(onto.stderr, /^live-mem: space 'alpha' exists: delete it first, or restore the backup as a new space with --as <new_space_id>\n/);
        const unconfirmed = await cli(store.env, ['backup', 'restore', backupId, '--as', 'alpha-copy']);
        assert.equal(unconfirmed.exitCode, 2);
        assert.match(unconfirmed.stderr, /creates space 'alpha-copy' from space 'alpha': run again with --yes$/);
        const onTaken = await cli(store.env, ['backup', 'restore', backupId, '--as', 'taken', '--yes']);
        assert.equal(onTaken.exitCode, 1);
        assert.match(onTaken.stderr, /^live-mem: space 'taken' exists: delete it first, or pick another space id\n/);
        const invalidId = await cli(store.env, ['backup', 'restore', backupId, '--as', '../escape', '--yes']);
        assert.equal(invalidId.exitCode, 2);
        assert.match(invalidId.stderr, /^live-mem: invalid space_id "\.\.\/escape"/);
        assert.deepEqual(await listKeys(store.storage, 'alpha-copy/'), []);
        assert.deepEqual(await snapshot(store.storage, 'taken'), taken);

        const restored = await cli(store.env, ['backup', 'restore', backupId, '--as', 'alpha-copy', '--yes', '--json']);
        assert.equal(restored.exitCode, 0, restored.stderr);
        const result = JSON.parse(restored.stdout);
        assert.equal(result.space_id, 'alpha-copy');
        assert.equal(result.from_space, 'alpha');
        assert.equal(result.checksums_verified, before.size);
        const copy = await snapshot(store.storage, 'alpha-copy');
        assert.deepEqual([...copy.keys()].sort(), [...before.keys()].sort());
        for (const [file, body] of before) if (file !== '_meta.json') assert.equal(copy.get(file), body, file);
        assert.equal(JSON.parse(Buffer.from(copy.get('_meta.json')!, 'base64').toString('utf8')).space_id, 'alpha-copy');
        assert.deepEqual(await snapshot(store.storage, 'alpha'), before);
        const read = await cli(store.env, ['read', 'alpha-copy', '--json']);
        assert.equal(read.exitCode, 0, read.stderr);
        assert.equal(JSON.parse(read.stdout).total, 5, 'the live notes came along');

        // The same verification as a restore in place: a tampered file refuses the whole backup.
        const [, stamp] = backupId.split('/');
        await store.storage.put(`_backups/alpha/${stamp}/files/_rules.md`, '# Tampered\n');
        const damaged = await cli(store.env, ['backup', 'restore', backupId, '--as', 'alpha-other', '--yes']);
        assert.equal(damaged.exitCode, 2);
        assert.match(damaged.stderr, /is damaged: _rules\.md does not match its checksum; nothing restored/);
        assert.deepEqual(await listKeys(store.storage, 'alpha-other/'), []);
      } finally {
        await store.cleanup();
      }
    });

  restoreAs('fs', fsStore);
  if (s3) restoreAs('radosgw', s3Store);
});

describe('backup tools over MCP', () => {
  it('create, list, download, delete, restore and space_export', async () => {
    const store = await fsStore();
    const llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    try {
      await populate(store.storage, llm);
      const before = await snapshot(store.storage, 'alpha');
      const server = await inProcessServer(store.env);
      try {
        const created = await server.call('backup_create', { space_id: 'alpha', description: 'mcp' });
        assert.equal(created.status, 'created');
        const list = await server.call('backup_list', {});
        assert.equal((list.backups as unknown[]).length, 1);
        const downloaded = await server.call('backup_download', { backup_id: created.backup_id });
        assert.ok(String(downloaded.archive_base64).length > 100);
        const exported = await server.call('space_export', { space_id: 'alpha' });
        assert.equal(exported.files_count, before.size);
        const onto = await server.call('backup_restore', { backup_id: created.backup_id, confirm: true });
        assert.equal(onto.status, 'already_exists');
        assert.match(String(onto.message), /delete it first, or restore the backup as a new space with as=<new_space_id>/);
        const copy = await server.call('backup_restore', { backup_id: created.backup_id, confirm: true, as: 'alpha-mcp' });
        assert.equal(copy.status, 'ok');
        assert.equal(copy.space_id, 'alpha-mcp');
        assert.equal(copy.from_space, 'alpha');
        assert.equal((await server.call('space_info', { space_id: 'alpha-mcp' })).status, 'ok');
        assert.equal((await server.call('backup_restore', { backup_id: created.backup_id, confirm: true, as: 'alpha-mcp' })).status, 'already_exists');
        assert.equal((await server.call('backup_restore', { backup_id: created.backup_id, confirm: true, as: 'no way' })).status, 'error');
        assert.equal((await server.call('space_delete', { space_id: 'alpha-mcp', confirm: true })).status, 'deleted');
        assert.equal((await server.call('space_delete', { space_id: 'alpha', confirm: true })).status, 'deleted');
        const restored = await server.call('backup_restore', { backup_id: created.backup_id, confirm: true });
        assert.equal(restored.status, 'ok');
        assert.deepEqual(await snapshot(store.storage, 'alpha'), before);
        assert.equal((await server.call('backup_restore', { backup_id: 'alpha/../../etc', confirm: true })).status, 'error');
        assert.equal((await server.call('backup_delete', { backup_id: created.backup_id, confirm: true })).status, 'deleted');
        assert.equal((await server.call('backup_list', { space_id: 'alpha' })).total, 0);
      } finally {
        await server.close();
      }
    } finally {
      await llm.close();
      await store.cleanup();
    }
  });
});
