/**
 * Faults lose no data: a writer killed with SIGKILL mid-stream, a disk that fills up, files that
 * were corrupted behind live-mem's back.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { spawnServer } from '../helpers/mcp-client.js';
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

  it('a full disk fails the write with a clear error, leaves no partial note, and recovers', async (t) => {
    const mountPoint = (await tempDir('live-mem-tinyfs')).dir;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      await rm(mountPoint, { recursive: true, force: true });
      if (process.env.CI) assert.fail('CI must be able to mount a tmpfs (root) for the full-disk test');
      t.skip('cannot mount a tmpfs here (needs root)');
      return;
    }
    try {
      const core = createCore({ storage: createFsDriver(mountPoint) });
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
      assert.deepEqual((await filesUnder(mountPoint)).filter((f) => f.endsWith('.lmtmp')), [], 'no temp file left behind');
      // Free some room: writing works again.
      await core.notes.read(owner, { space_id: 'full', limit: 1 });
      const victims = (await readdir(path.join(mountPoint, 'full', 'live'))).filter((f) => f.endsWith('.md')).slice(0, 3);
      for (const victim of victims) await rm(path.join(mountPoint, 'full', 'live', victim));
      assert.equal((await core.notes.write(owner, { space_id: 'full', category: 'todo', content: 'room again' })).status, 'created');
    } finally {
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    }
  });

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
