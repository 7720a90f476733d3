/**
 * The change feed (core/feed/): two cores on one store stand for two processes — what B writes, A's
 * feed tells (on fs through folder versions, on the memory driver through listings, as on S3); a
 * space nobody watches is not checked, and none is once its last subscriber leaves; a store that
 * fails once costs one interval, not the feed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../src/core/core.js';
import { createChangeFeed, type FeedEvent, STORE } from '../../src/core/feed/change-feed.js';
import { markersOf } from '../../src/core/feed/change-marker.js';
import { STORE_CHANGES } from '../../src/core/layout.js';
import { toStamp } from '../../src/core/note-name.js';
import { LiveMemError } from '../../src/shared/errors.js';
import { type Logger, silentLogger } from '../../src/shared/log.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { owner } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';
import { sleep, until } from '../helpers/wait.js';

const INTERVAL_MS = 50;

/** Every call to the store, counted (version too); `failNext` makes the next calls of a method throw. */
function watchedDriver(driver: StorageDriver) {
  const calls: string[] = [];
  const failing: Record<string, number> = {};
  const wrapped = Object.create(driver) as StorageDriver;
  for (const method of ['get', 'stat', 'list', 'put', 'delete', 'deleteMany', 'version', 'removeFolder'] as const) {
    const original = driver[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!original) continue;
    (wrapped as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      calls.push(method);
      if ((failing[method] ?? 0) > 0) {
        failing[method] = (failing[method] ?? 0) - 1;
        throw new LiveMemError('storage_error', `${method}: the store is down (test)`);
      }
      return original.apply(driver, args);
    };
  }
  return { driver: wrapped, calls, failNext: (method: string, times = 1) => (failing[method] = times) };
}

function recordingLogger() {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => lines.push(`${level} ${message}`);
  const logger: Logger = { debug: () => undefined, info: log('info'), warn: log('warn'), error: log('error') };
  return { logger, lines };
}

const simplify = (events: FeedEvent[]) =>
  events.map((event) => {
    switch (event.type) {
      case 'notes':
        return `notes +${event.added.length} -${event.removed.length}`;
      case 'bank_changed':
        return `bank ${event.files.map((file) => `${file.kind}:${file.filename}`).join(',')}${event.synthesis ? ' synthesis' : ''}${event.rules ? ' rules' : ''}`;
      case 'committed':
        return `committed ${event.ids.length}`;
      default:
        return `${event.type} ${event.space_id}`;
    }
  });

function scenario(label: string, makeStorage: () => Promise<{ storage: StorageDriver; remove(): Promise<void> }>) {
  describe(`the change feed ${label}`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    const twoCores = async () => {
      const { storage, remove } = await makeStorage();
      cleanups.push(remove);
      const watched = watchedDriver(storage);
      const { logger, lines } = recordingLogger();
      const a = createCore({ storage: watched.driver, logger, watchIntervalMs: INTERVAL_MS });
      const b = createCore({ storage });
      cleanups.push(async () => a.feed.close());
      return { a, b, watched, lines };
    };

    it("tells A what B wrote: notes, a correction, a commit's history entry, a space created and deleted", async () => {
      const { a, b } = await twoCores();
      await b.spaces.create(owner, { space_id: 'demo' });
      const events: FeedEvent[] = [];
      const space = a.feed.subscribe(['demo'], (event) => events.push(event));
      const store = a.feed.subscribe([STORE], (event) => events.push(event));
      await Promise.all([space.ready, store.ready]);
      assert.equal(events.length, 0, 'the baseline tells nothing');

      await b.notes.write(owner, { space_id: 'demo', category: 'decision', content: 'port 8443' });
      await until(() => events.length > 0, 'the note');
      assert.deepEqual(simplify(events), ['notes +1 -0']);

      events.length = 0;
      await b.revisions.write(owner, { space_id: 'demo', filename: 'activeContext.md', content: '# Active Context\n\n- by hand\n', reason: 'test' });
      await until(() => events.some((event) => event.type === 'bank_changed'), 'the correction');
      assert.deepEqual(simplify(events), ['committed 1', 'bank created:activeContext.md']);

      events.length = 0;
      await b.spaces.create(owner, { space_id: 'other' });
      await until(() => events.length > 0, 'the space created');
      assert.deepEqual(simplify(events), ['space_created other']);

      events.length = 0;
      await b.spaces.delete(owner, { space_id: 'demo', confirm: true });
      await until(() => events.length >= 2, 'the space deleted, told to both watches');
      assert.deepEqual(simplify(events).sort(), ['space_deleted demo', 'space_deleted demo']);
      space.unsubscribe();
      store.unsubscribe();
    });

    it('a space watched before it exists: told when it is created, then its notes; idle meanwhile', async () => {
      const { a, b, watched } = await twoCores();
      const events: FeedEvent[] = [];
      const subscription = a.feed.subscribe(['later'], (event) => events.push(event));
      await subscription.ready;
      await sleep(INTERVAL_MS * 3);
      const idle = watched.calls.length;
      await sleep(INTERVAL_MS * 4);
      const perCheck = (watched.calls.length - idle) / 4;
      assert.ok(perCheck <= 4.5, `an absent space costs a few calls a check (${watched.calls.slice(idle).join(', ')})`);
      await b.spaces.create(owner, { space_id: 'later' });
      await until(() => events.length > 0, 'the space created');
      await b.notes.write(owner, { space_id: 'later', category: 'progress', content: 'first note' });
      await until(() => events.length > 1, 'its note');
      assert.deepEqual(simplify(events), ['space_created later', 'notes +1 -0']);
      subscription.unsubscribe();
    });

    it('checks only watched spaces, and nothing once the last subscriber left', async () => {
      const { a, b, watched } = await twoCores();
      await b.spaces.create(owner, { space_id: 'demo' });
      await sleep(INTERVAL_MS * 4);
      assert.deepEqual(watched.calls, [], 'nobody watches: no request');
      const first = a.feed.subscribe(['demo'], () => undefined);
      const seen: FeedEvent[] = [];
      const second = a.feed.subscribe(['demo'], (event) => seen.push(event));
      await Promise.all([first.ready, second.ready]);
      first.unsubscribe();
      const before = watched.calls.length;
      await sleep(INTERVAL_MS * 4);
      assert.ok(watched.calls.length > before, 'one subscriber left: still checked');
      await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'still told' });
      await until(() => seen.length > 0, 'the note, to the subscriber left');
      second.unsubscribe();
      assert.deepEqual(a.feed.watching(), []);
      await sleep(INTERVAL_MS); // a check already running ends
      const stopped = watched.calls.length;
      await b.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'nobody listens' });
      await sleep(INTERVAL_MS * 10);
      assert.equal(watched.calls.length, stopped, `no request after the last unsubscribe (${watched.calls.slice(stopped).join(', ')})`);
    });

    it('a store that fails once: logged once, and the next interval recovers and tells the change', async () => {
      const { a, b, watched, lines } = await twoCores();
      await b.spaces.create(owner, { space_id: 'demo' });
      const events: FeedEvent[] = [];
      const subscription = a.feed.subscribe(['demo'], (event) => events.push(event));
      await subscription.ready;
      watched.failNext('list', 3);
      if (watched.driver.version) watched.failNext('version', 3);
      await b.notes.write(owner, { space_id: 'demo', category: 'issue', content: 'told after the fault' });
      await until(() => events.length > 0, 'the note after the fault');
      assert.deepEqual(simplify(events), ['notes +1 -0']);
      assert.equal(lines.filter((line) => line.startsWith('warn change detection failed')).length, 1, lines.join('\n'));
      assert.ok(lines.includes('info change detection recovered'), lines.join('\n'));
      subscription.unsubscribe();
    });

    it('listen: the same changes as an async iterable, ended by its signal', async () => {
      const { a, b } = await twoCores();
      await b.spaces.create(owner, { space_id: 'demo' });
      const controller = new AbortController();
      const seen: FeedEvent[] = [];
      const loop = (async () => {
        for await (const event of a.feed.listen(['demo'], { signal: controller.signal })) seen.push(event);
      })();
      await until(() => a.feed.watching().includes('demo'), 'the watch');
      await sleep(INTERVAL_MS * 2);
      await b.notes.write(owner, { space_id: 'demo', category: 'insight', content: 'iterated' });
      await until(() => seen.length > 0, 'the note through listen');
      controller.abort();
      await loop;
      assert.deepEqual(a.feed.watching(), []);
    });
  });
}

scenario('on fs (folder versions)', async () => {
  const home = await tempDir();
  return { storage: createFsDriver(home.dir), remove: home.remove };
});

scenario('on the memory driver (listings, as on S3)', async () => ({ storage: createMemoryDriver(), remove: async () => undefined }));

describe('a core consolidation through B, watched from A', () => {
  it('is one committed event and one bank event, after the commit is applied', async (t) => {
    const storage = createMemoryDriver();
    const a: Core = createCore({ storage, watchIntervalMs: INTERVAL_MS });
    const b = createCore({ storage });
    t.after(() => a.feed.close());
    await b.spaces.create(owner, { space_id: 'demo' });
    const events: FeedEvent[] = [];
    await a.feed.subscribe(['demo'], (event) => events.push(event)).ready;
    await b.notes.write(owner, { space_id: 'demo', category: 'decision', content: 'the cache lives in /var/cache/demo' });
    await until(() => events.length > 0, 'the note');
    events.length = 0;
    const pkg = (await b.consolidation.ask(owner, { space_id: 'demo' })) as { handle: string; prompt: string };
    const { writePlan } = await import('../helpers/plan-writer.js');
    const done = await b.consolidation.submit(owner, { space_id: 'demo', handle: pkg.handle }, writePlan(pkg));
    assert.equal(done.status, 'ok');
    await until(() => events.some((event) => event.type === 'bank_changed'), 'the bank change');
    await sleep(INTERVAL_MS * 3);
    assert.deepEqual(simplify(events).sort(), ['bank created:activeContext.md synthesis', 'committed 1', 'notes +0 -1']);
  });
});

/** The memory driver without its folders: a store of objects, as S3 (no folders, no folder versions). */
function objectStore(): StorageDriver {
  const { removeFolder: _folders, ...objects } = createMemoryDriver();
  return objects;
}

describe('change markers, on a store of objects without folders (the memory driver without its folders, as S3)', () => {
  it('names the markers a write touches', () => {
    assert.deepEqual(markersOf('demo/live/20261203T101010_a_decision_abcd1234.md'), ['_system/changes/demo.json']);
    assert.deepEqual(markersOf('demo/history/20261203T101010-abc123/record.json'), ['_system/changes/demo.json']);
    assert.deepEqual(markersOf('demo/bank/activeContext.md'), ['_system/changes/demo.json']);
    assert.deepEqual(markersOf('demo/_meta.json'), ['_system/changes/demo.json', STORE_CHANGES]);
    assert.deepEqual(markersOf('demo/_meta.json', true), [STORE_CHANGES], 'a deleted meta: the store marker only');
    assert.deepEqual(markersOf('demo/', true), [STORE_CHANGES]);
    for (const key of ['demo/_index/1.snapshot', 'demo/_consolidation/lock.json', '_system/changes/demo.json', '_system/changes.json', 'demo/live/x.md']) {
      if (key === 'demo/live/x.md') assert.deepEqual(markersOf(key, true), [], 'a note deleted: no marker (a commit writes its history)');
      else assert.deepEqual(markersOf(key), [], key);
    }
  });

  it("an idle watched space costs one HEAD a check; another process's note is told through its marker", async (t) => {
    const storage = objectStore();
    const watched = watchedDriver(storage);
    const a = createCore({ storage: watched.driver, watchIntervalMs: INTERVAL_MS });
    const b = createCore({ storage });
    t.after(() => a.feed.close());
    await b.spaces.create(owner, { space_id: 'demo' });
    const events: FeedEvent[] = [];
    await a.feed.subscribe(['demo'], (event) => events.push(event)).ready;
    const start = watched.calls.length;
    await sleep(INTERVAL_MS * 8);
    const idle = watched.calls.slice(start);
    assert.ok(idle.length >= 4, `checks ran (${idle.length})`);
    assert.deepEqual([...new Set(idle)], ['stat'], `an idle check is one HEAD of the marker (${idle.join(', ')})`);
    await b.notes.write(owner, { space_id: 'demo', category: 'decision', content: 'told through the marker' });
    await until(() => events.length > 0, 'the note');
    assert.deepEqual(simplify(events), ['notes +1 -0']);
    assert.ok(await storage.stat('_system/changes/demo.json'), 'B wrote the marker');
  });

  it('a writer that keeps no marker (an older release, the Python server) is told at the next full listing', async (t) => {
    const storage = objectStore();
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'demo' });
    const feed = createChangeFeed({ storage: core.context.storage, logger: silentLogger, clock: () => new Date(), intervalMs: INTERVAL_MS, fullCheckMs: 400 });
    t.after(() => feed.close());
    const events: FeedEvent[] = [];
    await feed.subscribe(['demo'], (event) => events.push(event)).ready;
    // Straight to the store, no marker: as a writer that does not know of them.
    await storage.put(`demo/live/${toStamp(new Date())}_python_decision_0a1b2c3d.md`, '# note\n\nwritten without a marker\n');
    await sleep(INTERVAL_MS * 3);
    assert.equal(events.length, 0, 'not before the full listing');
    await until(() => events.length > 0, 'the note, at the full listing', 2_000);
    assert.deepEqual(simplify(events), ['notes +1 -0']);
  });

  it('a marker that cannot be written fails no note; the change is told at the full listing', async (t) => {
    const storage = objectStore();
    const refusing = Object.assign(Object.create(storage) as StorageDriver, {
      put: (key: string, ...rest: unknown[]) =>
        key.startsWith('_system/changes')
          ? Promise.reject(new LiveMemError('storage_error', 'the store is down (test)'))
          : (storage.put as (...a: unknown[]) => Promise<{ etag: string }>).call(storage, key, ...rest),
    });
    const writer = createCore({ storage: refusing });
    await writer.spaces.create(owner, { space_id: 'demo' });
    const feed = createChangeFeed({ storage, logger: silentLogger, clock: () => new Date(), intervalMs: INTERVAL_MS, fullCheckMs: 300 });
    t.after(() => feed.close());
    const events: FeedEvent[] = [];
    await feed.subscribe(['demo'], (event) => events.push(event)).ready;
    const written = await writer.notes.write(owner, { space_id: 'demo', category: 'todo', content: 'written all the same' });
    assert.equal(written.status, 'created');
    await until(() => events.length > 0, 'the note, at the full listing', 2_000);
    assert.deepEqual(simplify(events), ['notes +1 -0']);
  });
});
