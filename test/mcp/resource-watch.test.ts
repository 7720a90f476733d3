/**
 * One client's resource subscriptions over the change feed (mcp/resource-watch.ts), in process: the
 * URIs a change touches are told, others not; the store's list of spaces is watched for a client that
 * listed on fs (a stat) but on a store without folder versions (S3, the memory driver) only while it
 * subscribes; close stops every watch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../src/core/core.js';
import { STORE } from '../../src/core/feed/change-feed.js';
import { createResourceWatch } from '../../src/mcp/resource-watch.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep, until } from '../helpers/wait.js';

const recorder = () => {
  const updated: string[] = [];
  let listChanged = 0;
  return { updated, lists: () => listChanged, notices: { updated: (uri: string) => updated.push(uri), listChanged: () => void listChanged++ } };
};

describe('resource watch', () => {
  it('on a store without folder versions: the list of spaces is watched only while the client subscribes', async () => {
    const storage = createMemoryDriver();
    const a = createCore({ storage, watchIntervalMs: 20 });
    const b = createCore({ storage });
    await b.spaces.create(owner, { space_id: 'demo' });
    const seen = recorder();
    const watch = createResourceWatch(a, seen.notices);
    watch.listed(owner);
    assert.deepEqual(a.feed.watching(), [], 'listing alone costs no request');
    await a.spaces.create(owner, { space_id: 'mine' });
    assert.equal(seen.lists(), 1, "a space this process created is still told, from the core's own events");

    await watch.subscribe('live-mem://demo/live', 'demo');
    assert.deepEqual(a.feed.watching().sort(), [STORE, 'demo'].sort());
    await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'from b' });
    await until(() => seen.updated.length > 0, 'the live notes updated');
    assert.deepEqual(seen.updated, ['live-mem://demo/live']);
    await b.spaces.create(owner, { space_id: 'theirs' });
    await until(() => seen.lists() > 1, 'list_changed for a space created elsewhere');

    watch.unsubscribe('live-mem://demo/live');
    assert.deepEqual(a.feed.watching(), []);
    watch.close();
  });

  it('on fs: the list of spaces is watched from the first listing; close stops every watch', async () => {
    const home = await tempDir();
    try {
      const a = createCore({ storage: createFsDriver(home.dir), watchIntervalMs: 20 });
      const b = createCore({ storage: createFsDriver(home.dir) });
      const seen = recorder();
      const watch = createResourceWatch(a, seen.notices);
      watch.listed(owner);
      assert.deepEqual(a.feed.watching(), [STORE]);
      await sleep(60); // the baseline
      await b.spaces.create(owner, { space_id: 'elsewhere' });
      await until(() => seen.lists() === 1, 'list_changed for a space another core created');
      await watch.subscribe('live-mem://elsewhere/bank/progress.md', 'elsewhere');
      await b.revisions.write(owner, { space_id: 'elsewhere', filename: 'notes.md', content: '# Notes\n', reason: 'test' });
      await until(() => seen.lists() === 2, 'list_changed for a bank file created elsewhere');
      assert.deepEqual(seen.updated, [], 'no subscribed URI changed');
      watch.close();
      assert.deepEqual(a.feed.watching(), []);
    } finally {
      await home.remove();
    }
  });
});
