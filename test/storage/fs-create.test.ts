import assert from 'node:assert/strict';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isLiveMemError } from '../../src/shared/errors.js';
import { createFileCreator, type FileCreator } from '../../src/storage/fs/create-file.js';
import { tempDir } from '../helpers/tmp.js';

let count = 0;
const tempFor = (file: string) => `${file}.t${count++}.lmtmp`;
const temps = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith('.lmtmp'));
/** Waits for the spare, opened on a pool thread after a create. */
async function spareIn(dir: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const found = await temps(dir);
    if (found.length === 1) return found[0] as string;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no spare in ${dir}: ${(await readdir(dir)).join(', ')}`);
}

async function withCreator(fn: (creator: FileCreator, dir: string) => Promise<void>, options?: { spareIdleMs?: number }): Promise<void> {
  const tmp = await tempDir();
  const creator = createFileCreator(tempFor, options);
  try {
    await fn(creator, path.join(tmp.dir, 'live'));
  } finally {
    await creator.close();
    await tmp.remove();
  }
}

const create = (creator: FileCreator, dir: string, name: string, body = `body of ${name}`, inExistingFolder = false) =>
  creator.create(`live/${name}`, path.join(dir, name), body, inExistingFolder);

describe('fs create-only writes and the spare temp file', () => {
  it('keeps no spare for a process that writes one file, and leaves nothing when closed', () =>
    withCreator(async (creator, dir) => {
      await create(creator, dir, 'a.md');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(await readdir(dir), ['a.md']);
    }));

  it('from the second file on, writes the next one into a spare opened ahead, which close removes', () =>
    withCreator(async (creator, dir) => {
      await create(creator, dir, 'a.md');
      await create(creator, dir, 'b.md');
      const spare = await spareIn(dir);
      const spareIno = (await stat(path.join(dir, spare))).ino;
      assert.equal((await stat(path.join(dir, spare))).size, 0, 'the spare is empty');
      const stats = await create(creator, dir, 'c.md');
      assert.equal(stats.ino, spareIno, 'c.md is the spare, named');
      assert.equal(await readFile(path.join(dir, 'c.md'), 'utf8'), 'body of c.md');
      assert.equal((await stat(path.join(dir, 'c.md'))).nlink, 1, 'the temp name is gone');
      await spareIn(dir); // the next one
      await creator.close();
      assert.deepEqual((await readdir(dir)).sort(), ['a.md', 'b.md', 'c.md']);
    }));

  it('never overwrites: a taken name fails and leaves the existing file and no temp file', () =>
    withCreator(async (creator, dir) => {
      await create(creator, dir, 'a.md');
      await create(creator, dir, 'b.md');
      await spareIn(dir);
      await assert.rejects(create(creator, dir, 'a.md', 'intruder'), (error) => isLiveMemError(error, 'precondition_failed'));
      assert.equal(await readFile(path.join(dir, 'a.md'), 'utf8'), 'body of a.md');
      assert.deepEqual(await temps(dir), [], 'the spare went into the failed write and was removed');
    }));

  it('writes afresh when the spare was swept behind its back', () =>
    withCreator(async (creator, dir) => {
      await create(creator, dir, 'a.md');
      await create(creator, dir, 'b.md');
      await rm(path.join(dir, await spareIn(dir))); // what a listing does to an hour-old temp file
      await create(creator, dir, 'c.md');
      assert.equal(await readFile(path.join(dir, 'c.md'), 'utf8'), 'body of c.md');
    }));

  it('does not write into a folder taken away, though its spare went with it', () =>
    withCreator(async (creator, dir) => {
      await create(creator, dir, 'a.md');
      await create(creator, dir, 'b.md');
      await spareIn(dir);
      const aside = `${dir}.aside.lmtmp`;
      await rename(dir, aside); // what removeFolder does
      await assert.rejects(create(creator, dir, 'c.md', 'late', true), (error) => isLiveMemError(error, 'not_found'));
      assert.deepEqual((await readdir(aside)).filter((name) => name.endsWith('.md')).sort(), ['a.md', 'b.md'], 'nothing landed aside');
      await assert.rejects(stat(dir), { code: 'ENOENT' });
      // Allowed to make the folder, the write lands in a new one.
      await create(creator, dir, 'c.md', 'new folder');
      assert.deepEqual(
        (await readdir(dir)).filter((name) => name.endsWith('.md')),
        ['c.md'],
      );
    }));

  it('drops a spare left unused, so an idle process leaves nothing beside the files', () =>
    withCreator(
      async (creator, dir) => {
        await create(creator, dir, 'a.md');
        await create(creator, dir, 'b.md');
        await spareIn(dir);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.deepEqual(await temps(dir), []);
        await create(creator, dir, 'c.md'); // and writes on without it
        assert.equal(await readFile(path.join(dir, 'c.md'), 'utf8'), 'body of c.md');
      },
      { spareIdleMs: 100 },
    ));

  it('follows the writes to another folder, removing the spare it leaves', () =>
    withCreator(async (creator, dir) => {
      const other = `${dir}2`;
      await create(creator, dir, 'a.md');
      await create(creator, dir, 'b.md');
      await spareIn(dir);
      await create(creator, other, 'x.md');
      await create(creator, other, 'y.md');
      await spareIn(other);
      for (let i = 0; i < 100 && (await temps(dir)).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(await temps(dir), []);
    }));
});

describe('fs create errors', () => {
  it('name the file being written, never its temp file', async () => {
    const tmp = await tempDir();
    // A temp file that cannot be opened (its folder is a regular file): the system error names the temp path.
    const blocker = path.join(tmp.dir, 'blocker');
    await writeFile(blocker, 'x');
    const creator = createFileCreator(() => path.join(blocker, 'a.md.t0.lmtmp'));
    try {
      const file = path.join(tmp.dir, 'a.md');
      await assert.rejects(creator.create('live/a.md', file, 'body', true), (error: Error) => {
        assert.ok(isLiveMemError(error, 'storage_error'), String(error));
        assert.match(error.message, new RegExp(`^fs create failed for ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOTDIR`));
        assert.doesNotMatch(error.message, /lmtmp/);
        return true;
      });
    } finally {
      await creator.close();
      await tmp.remove();
    }
  });
});
