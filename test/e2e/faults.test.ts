/**
 * Faults lose no data: a writer or an import killed with SIGKILL mid-stream, a disk that fills up,
 * files that were corrupted behind live-mem's back.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { mapLimit } from '../../src/shared/concurrency.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { BIN, spawnServer } from '../helpers/mcp-client.js';
import { onTinyDisk } from '../helpers/tiny-disk.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('checker');

/** Every file under `dir`, recursively, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('faults', () => {
  it('a server killed with SIGKILL mid-stream loses no acknowledged note and leaves no torn one', async () => {
    const home = await tempDir();
    try {
      const server = await spawnServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });
      await server.call('space_create', { space_id: 'k' });
      const acked = new Map<string, string>();
      const content = (i: number) => `note ${i} ${'x'.repeat(2000)} end ${i}`;
      let next = 0;
      const writer = async () => {
        while (next < 2000) {
          const i = next++;
          const result = await server.call('live_note', { space_id: 'k', category: 'progress', content: content(i) });
          acked.set(String(result.filename), content(i));
        }
      };
      const writers = Array.from({ length: 16 }, () => writer().catch(() => undefined));
      while (acked.size < 150) await new Promise((resolve) => setTimeout(resolve, 2));
      const pid = (server.client.transport as unknown as { pid: number | null }).pid;
      assert.ok(pid);
      process.kill(pid, 'SIGKILL');
      await Promise.all(writers);
      await server.close().catch(() => undefined);

      const core = createCore({ storage: createFsDriver(home.dir) });
      const read = await core.notes.read(owner, { space_id: 'k', limit: 1000 });
      const stored = new Map(read.notes.map((n) => [n.filename, n.content]));
      for (const [filename, text] of acked) assert.equal(stored.get(filename), text, `acknowledged ${filename}`);
      for (const note of read.notes) assert.match(note.content, /^note (\d+) x{2000} end \1$/, 'no torn note');
      assert.ok(read.notes.length >= acked.size && read.notes.length < 2000);
      // The store is still usable by the next process.
      const again = await core.notes.write(owner, { space_id: 'k', category: 'todo', content: 'after the crash' });
      assert.equal(again.status, 'created');
    } finally {
      await home.remove();
    }
  });

  it('a full disk fails the write with a clear error, leaves no partial note, and recovers', (t) =>
    onTinyDisk(t, async (mountPoint) => {
      const storage = createFsDriver(mountPoint);
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: 'full' });
      let written = 0;
      let failure: unknown;
      for (let i = 0; i < 1000 && !failure; i++) {
        try {
          await core.notes.write(owner, { space_id: 'full', category: 'progress', content: `${i} ${'y'.repeat(6000)}` });
          written++;
        } catch (error) {
          failure = error;
        }
      }
      assert.ok(written > 0, 'some notes fit');
      assert.ok(isLiveMemError(failure, 'storage_error'), String(failure));
      assert.match((failure as Error).message, /disk is full/);
      const read = await core.notes.read(owner, { space_id: 'full', limit: 1000 });
      assert.equal(read.total, written, 'exactly the acknowledged notes are there');
      for (const note of read.notes) assert.match(note.content, /^\d+ y{6000}$/);
      // No partial temp file; at most the driver's spare (opened ahead for the next note, empty).
      const temps = (await filesUnder(mountPoint)).filter((f) => f.endsWith('.lmtmp'));
      assert.ok(temps.length <= 1, `no temp file left behind: ${temps.join(', ')}`);
      for (const temp of temps) assert.equal((await stat(path.join(mountPoint, temp))).size, 0, `${temp} is the empty spare`);
      // Free some room: writing works again.
      await core.notes.read(owner, { space_id: 'full', limit: 1 });
      const victims = (await readdir(path.join(mountPoint, 'full', 'live'))).filter((f) => f.endsWith('.md')).slice(0, 3);
      for (const victim of victims) await rm(path.join(mountPoint, 'full', 'live', victim));
      assert.equal((await core.notes.write(owner, { space_id: 'full', category: 'todo', content: 'room again' })).status, 'created');
      await storage.close?.();
      assert.deepEqual(
        (await filesUnder(mountPoint)).filter((f) => f.endsWith('.lmtmp')),
        [],
        'closed, the driver leaves no temp file',
      );
    }));

  it('an import killed with SIGKILL leaves no space; the next import or space_create of the id starts clean', async () => {
    const home = await tempDir();
    try {
      const storage = createFsDriver(home.dir);
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: 'src' });
      await mapLimit(
        Array.from({ length: 6000 }, (_, i) => i),
        16,
        (i) => core.notes.write(owner, { space_id: 'src', category: 'progress', content: `note ${i}` }),
      );
      const archive = path.join(home.dir, 'src.tar.gz');
      await pipeline((await core.backups.exportStream(owner, 'src')).stream, createWriteStream(archive));
      const env = { ...process.env, LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'error' };

      /** Starts `live-mem import --as copy` and kills it once it has written `atLeast` notes. */
      const importKilledMidway = async (atLeast: number) => {
        const child = spawn(process.execPath, [BIN, 'import', archive, '--as', 'copy'], { env, stdio: 'ignore' });
        const exited = new Promise((resolve) => child.on('exit', resolve));
        let finished = false;
        void exited.then(() => (finished = true));
        while (!finished && (await readdir(path.join(home.dir, 'copy', 'live')).catch(() => [])).length < atLeast)
          await new Promise((resolve) => setTimeout(resolve, 5));
        assert.equal(finished, false, 'the import must still be running when killed');
        child.kill('SIGKILL');
        await exited;
        assert.equal(await storage.stat('copy/_meta.json'), null, 'a killed import leaves no space');
        assert.ok((await listKeys(storage, 'copy/')).length >= atLeast, 'it had written files');
        assert.deepEqual(
          (await core.spaces.list(owner)).spaces.map((space) => space.space_id),
          ['src'],
        );
      };

      await importKilledMidway(200);
      const created = await execa(process.execPath, [BIN, 'space', 'create', 'copy'], { env, reject: false });
      assert.equal(created.exitCode, 0, created.stderr);
      assert.deepEqual(
        await listKeys(storage, 'copy/'),
        ['copy/_meta.json', 'copy/_rules.md', 'copy/bank/.keep', 'copy/live/.keep'],
        'space_create removed the leftovers',
      );
      await core.spaces.delete(owner, { space_id: 'copy', confirm: true });

      await importKilledMidway(1000);
      const imported = await execa(process.execPath, [BIN, 'import', archive, '--as', 'copy'], { env, reject: false });
      assert.equal(imported.exitCode, 0, imported.stderr);
      const [source, copy] = await Promise.all([listKeys(storage, 'src/'), listKeys(storage, 'copy/')]);
      assert.deepEqual(
        copy.map((key) => key.slice('copy/'.length)),
        source.map((key) => key.slice('src/'.length)),
        'exactly the archive, no leftover',
      );
      for (const key of source.filter((k) => !k.endsWith('_meta.json'))) {
        assert.deepEqual((await storage.get(`copy/${key.slice(4)}`))?.body, (await storage.get(key))?.body, key);
      }
    } finally {
      await home.remove();
    }
  });

  it('an import onto a full disk fails with a clear error and leaves nothing behind', (t) =>
    onTinyDisk(t, async (mountPoint) => {
      const home = await tempDir();
      try {
        const source = createCore({ storage: createFsDriver(home.dir) });
        await source.spaces.create(owner, { space_id: 'big' });
        await mapLimit(
          Array.from({ length: 300 }, (_, i) => i),
          16,
          (i) => source.notes.write(owner, { space_id: 'big', category: 'progress', content: `${i} ${'z'.repeat(3000)}` }),
        );
        const archive = path.join(home.dir, 'big.tar.gz');
        await pipeline((await source.backups.exportStream(owner, 'big')).stream, createWriteStream(archive));

        const target = createCore({ storage: createFsDriver(mountPoint) });
        await assert.rejects(
          target.backups.importArchive(owner, () => createReadStream(archive)),
          (error) => isLiveMemError(error, 'storage_error') && /disk is full/.test(error.message),
        );
        assert.deepEqual(await filesUnder(mountPoint), [], 'nothing left behind');
        assert.deepEqual((await target.spaces.list(owner)).spaces, []);
      } finally {
        await home.remove();
      }
    }));

  it('reads around files corrupted behind its back, and says what is unreadable', async () => {
    const home = await tempDir();
    try {
      const core = createCore({ storage: createFsDriver(home.dir) });
      await core.spaces.create(owner, { space_id: 'c' });
      await core.notes.write(owner, { space_id: 'c', category: 'todo', content: 'intact' });
      const live = path.join(home.dir, 'c', 'live');
      await writeFile(path.join(live, '20260101T000000_x_todo_00000000.md'), '---\ntimestamp: [unclosed\n');
      await writeFile(path.join(live, '20260101T000001_x_todo_00000001.md'), Buffer.from([0xff, 0xfe, 0x00, 0x41]));
      await mkdir(path.join(live, '20260101T000002_x_todo_00000002.md'));
      const read = await core.notes.read(owner, { space_id: 'c' });
      assert.equal(read.notes[0]?.content, 'intact');
      assert.equal(read.total, 3, 'the two unreadable files come back as raw content; the folder is not a note');
      await writeFile(path.join(home.dir, 'c', '_meta.json'), '{ truncated');
      await assert.rejects(core.spaces.info(owner, { space_id: 'c' }), (e) => isLiveMemError(e, 'storage_error') && /unreadable _meta.json/.test(e.message));
    } finally {
      await home.remove();
    }
  });
});
