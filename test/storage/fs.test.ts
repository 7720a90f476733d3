import assert from 'node:assert/strict';
import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { tempDir } from '../helpers/tmp.js';
import { runStorageSuite } from './suite.js';

runStorageSuite('fs', async () => {
  const tmp = await tempDir();
  return { driver: createFsDriver(tmp.dir), cleanup: tmp.remove };
});

describe('fs driver specifics', () => {
  it('writes plain files under the root, leaves no temp or lock files, prunes empty folders', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('space/live/a.md', 'hello');
      await driver.put('space/_meta.json', '{}');
      await driver.put('space/_meta.json', '{"a":1}');
      assert.equal(await readFile(path.join(tmp.dir, 'space/live/a.md'), 'utf8'), 'hello');
      assert.deepEqual((await readdir(path.join(tmp.dir, 'space'))).sort(), ['_meta.json', 'live']);
      await driver.delete('space/live/a.md');
      assert.deepEqual(await readdir(path.join(tmp.dir, 'space')), ['_meta.json']);
    } finally {
      await tmp.remove();
    }
  });

  it('ignores leftovers of a crashed writer and breaks a stale lock', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      const { etag } = await driver.put('s/k.md', 'v1');
      await writeFile(path.join(tmp.dir, 's/k.md.abc.lmtmp'), 'half a wri');
      const lock = path.join(tmp.dir, 's/k.md.lmlock');
      await writeFile(lock, '');
      const old = new Date(Date.now() - 60_000);
      const { utimes } = await import('node:fs/promises');
      await utimes(lock, old, old);
      assert.deepEqual(await listKeys(driver, 's/'), ['s/k.md']);
      await driver.put('s/k.md', 'v2', { ifMatch: etag });
      assert.equal((await driver.get('s/k.md'))?.body.toString(), 'v2');
    } finally {
      await tmp.remove();
    }
  });

  it('treats a folder as no object', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('d/inner/x.md', 'x');
      assert.equal(await driver.get('d/inner'), null);
      assert.equal(await driver.stat('d/inner'), null);
      await symlink('/etc', path.join(tmp.dir, 'd', 'link'));
      assert.deepEqual(await listKeys(driver, 'd/'), ['d/inner/x.md']);
    } finally {
      await tmp.remove();
    }
  });
});
