import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFreshStat } from '../../src/core/fresh-stat.js';
import type { ObjectInfo, StorageDriver } from '../../src/storage/types.js';

/** A store whose stats answer only when told to, each with the object's state when the stat started. */
function heldStats() {
  let exists = true;
  const started: Array<{ key: string; answer(): void; fail(error: Error): void }> = [];
  const storage = {
    stat(key: string): Promise<ObjectInfo | null> {
      const seen = exists ? { key, etag: 'e1' } : null;
      return new Promise((resolve, reject) => {
        started.push({ key, answer: () => resolve(seen), fail: reject });
      });
    },
  } as unknown as StorageDriver;
  return {
    storage,
    started,
    remove: () => {
      exists = false;
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('fresh stats', () => {
  it('50 calls at once share two stats, and each answer comes from a stat started after its call', async () => {
    const store = heldStats();
    const freshStat = createFreshStat(store.storage);
    const first = freshStat('k');
    store.remove(); // deleted after the first call, before the others
    const later = Array.from({ length: 49 }, () => freshStat('k'));
    assert.equal(store.started.length, 1);
    store.started[0]?.answer();
    assert.deepEqual(await first, { key: 'k', etag: 'e1' });
    await turn();
    assert.equal(store.started.length, 2, 'one more stat for every call that arrived meanwhile');
    store.started[1]?.answer();
    for (const answer of await Promise.all(later)) assert.equal(answer, null, 'the deletion is seen by every later call');
    assert.equal(store.started.length, 2);
  });

  it('keys are independent, a failed stat fails its callers only, and the next call stats again', async () => {
    const store = heldStats();
    const freshStat = createFreshStat(store.storage);
    const a = freshStat('a');
    const b = freshStat('b');
    assert.equal(store.started.length, 2);
    store.started[0]?.fail(new Error('disk'));
    store.started[1]?.answer();
    await assert.rejects(a, /disk/);
    assert.deepEqual(await b, { key: 'b', etag: 'e1' });
    const again = freshStat('a');
    assert.equal(store.started.length, 3);
    store.started[2]?.answer();
    assert.deepEqual(await again, { key: 'a', etag: 'e1' });
  });
});
