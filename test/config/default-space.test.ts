import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { defaultSpaceFor, toSpaceId } from '../../src/config/default-space.js';
import { tempDir } from '../helpers/tmp.js';

describe('default space', () => {
  it('makes a folder name a space id', () => {
    assert.equal(toSpaceId('live-mem'), 'live-mem');
    assert.equal(toSpaceId('My Project.v2'), 'My-Project-v2');
    assert.equal(toSpaceId('_private_'), 'private');
    assert.equal(toSpaceId('Café crème'), 'Cafe-creme');
    assert.equal(toSpaceId('x'.repeat(80)).length, 64);
    for (const unusable of ['', '/', '...', '日本']) assert.equal(toSpaceId(unusable), 'default', unusable);
  });

  it("is the git repository's folder (a .git folder, or a worktree's .git file), else the folder itself", async () => {
    const tmp = await tempDir();
    try {
      const repo = path.join(tmp.dir, 'repo one');
      await mkdir(path.join(repo, '.git'), { recursive: true });
      await mkdir(path.join(repo, 'a', 'b'), { recursive: true });
      assert.equal(defaultSpaceFor(path.join(repo, 'a', 'b')), 'repo-one');
      const worktree = path.join(tmp.dir, 'wt');
      await mkdir(worktree);
      await writeFile(path.join(worktree, '.git'), 'gitdir: elsewhere\n');
      assert.equal(defaultSpaceFor(worktree), 'wt');
      const plain = path.join(tmp.dir, 'plain dir');
      await mkdir(plain);
      assert.equal(defaultSpaceFor(plain), 'plain-dir');
    } finally {
      await tmp.remove();
    }
  });
});
