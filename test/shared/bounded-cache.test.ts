import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedCache } from '../../src/shared/bounded-cache.js';

describe('bounded cache (the one cache policy)', () => {
  it('forgets the least recently used past its weight; a read makes an entry recent, a peek does not', () => {
    const cache = new BoundedCache<string>(3);
    cache.set('a', 'A', 1);
    cache.set('b', 'B', 1);
    cache.set('c', 'C', 1);
    assert.equal(cache.get('a'), 'A');
    assert.equal(cache.peek('b'), 'B');
    cache.set('d', 'D', 1);
    assert.deepEqual([...cache.keys()], ['c', 'a', 'd']);
    assert.equal(cache.weight, 3);
  });

  it('drops an entry heavier than the whole cache, and keys may be numbers', () => {
    const cache = new BoundedCache<number, number>(10);
    cache.set(1, 1, 11);
    assert.equal(cache.size, 0);
    cache.set(2, 2, 10);
    assert.equal(cache.get(2), 2);
  });

  it('passes over entries in use, tells the owner what it evicts, and counts the weight held outside on their behalf', () => {
    const evicted: string[] = [];
    const busy = new Set(['a']);
    const outside = new Map([
      ['a', 0],
      ['b', 5],
      ['c', 0],
    ]);
    const cache = new BoundedCache<string>(10, {
      evictable: (key) => !busy.has(key),
      onEvict: (key) => evicted.push(key),
      outside: (key) => outside.get(key) ?? 0,
    });
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 3);
    cache.set('c', 'C', 3);
    assert.deepEqual(evicted, []);
    // 10 in the cache and 6 outside: 'a' is busy, so 'b' goes, with the 5 held outside for it.
    cache.trim(6);
    assert.deepEqual(evicted, ['b']);
    assert.deepEqual([...cache.keys()], ['a', 'c']);
  });

  it('weighs an entry anew without changing its recency or evicting', () => {
    const cache = new BoundedCache<string>(5);
    cache.set('a', 'A', 1);
    cache.set('b', 'B', 1);
    cache.reweigh('a', 9);
    assert.equal(cache.weight, 10);
    assert.deepEqual([...cache.keys()], ['a', 'b']);
    cache.trim();
    assert.deepEqual([...cache.keys()], ['b']);
    assert.equal(cache.weightOfKey('b'), 1);
  });
});
