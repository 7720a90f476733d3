import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedCache, MemoCache } from '../../src/shared/bounded-cache.js';

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

describe('memo cache (the same policy by count: past the limit, the older half goes)', () => {
  it('forgets the entries stored first, half the limit at once, once full', () => {
    const cache = new MemoCache<string>(4);
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, key.toUpperCase());
    assert.equal(cache.size, 4);
    cache.set('e', 'E'); // full: a and b, stored first, go
    assert.equal(cache.size, 3);
    assert.deepEqual(
      ['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(key)),
      [undefined, undefined, 'C', 'D', 'E'],
    );
  });

  it('never holds more than its limit, and at least half of it once filled', () => {
    const cache = new MemoCache<number, number>(10);
    for (let key = 0; key < 1000; key++) {
      cache.set(key, key);
      assert.ok(cache.size <= 10, `size ${cache.size} after ${key + 1} stores`);
      if (key >= 5) assert.ok(cache.size >= 5, `size ${cache.size} after ${key + 1} stores`);
    }
    assert.equal(cache.get(999), 999);
    assert.equal(cache.get(0), undefined);
    const none = new MemoCache<number, number>(0);
    none.set(1, 1);
    assert.equal(none.size, 0);
    assert.equal(none.get(1), undefined);
  });

  it('keeps answering hits on the newer half through an eviction', () => {
    const cache = new MemoCache<number, number>(100);
    for (let key = 0; key < 100; key++) cache.set(key, key * 2);
    for (let key = 50; key < 100; key++) assert.equal(cache.get(key), key * 2);
    cache.set(100, 200); // evicts 0 to 49
    for (let key = 50; key <= 100; key++) assert.equal(cache.get(key), key * 2, `key ${key}`);
    assert.equal(cache.get(49), undefined);
  });

  it('tallies what its entries weigh as they come and go', () => {
    const cache = new MemoCache<number>(4, (key) => key.length);
    cache.set('aa', 1);
    cache.set('bbb', 2);
    cache.set('c', 3);
    cache.set('dddd', 4);
    assert.equal(cache.weight, 10);
    cache.set('e', 5); // aa and bbb go
    assert.equal(cache.weight, 6);
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.weight, 0);
    assert.equal(cache.get('e'), undefined);
  });
});
