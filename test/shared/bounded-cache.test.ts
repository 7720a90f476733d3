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

describe('memo cache (the same policy by count, in generations)', () => {
  it('drops the older generation whole once the young one holds half the limit; an old entry asked for moves back', () => {
    const cache = new MemoCache<string>(4);
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('c', 'C'); // the young generation was full: a and b are now the old one
    assert.equal(cache.size, 3);
    assert.equal(cache.get('a'), 'A'); // back in the young generation, beside c
    cache.set('d', 'D'); // c and a become the old generation; b, not asked for since, goes
    assert.equal(cache.size, 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('c'), 'C');
    assert.equal(cache.get('a'), 'A');
    assert.equal(cache.get('d'), 'D');
  });

  it('never holds more than its limit, and holds at least half of it once filled', () => {
    const cache = new MemoCache<number, number>(10);
    for (let key = 0; key < 1000; key++) {
      cache.set(key, key);
      assert.ok(cache.size <= 10, `size ${cache.size} after ${key + 1} stores`);
      if (key >= 5) assert.ok(cache.size >= 5, `size ${cache.size} after ${key + 1} stores`);
    }
    assert.equal(cache.get(999), 999);
    assert.equal(cache.get(0), undefined);
    const none = new MemoCache<number, number>(1);
    none.set(1, 1);
    assert.equal(none.size, 0);
    assert.equal(none.get(1), undefined);
  });

  it('keeps an entry asked for at least once every half-limit stores, however many pass', () => {
    const cache = new MemoCache<string>(100);
    cache.set('hot', 'H');
    cache.set('cold', 'C');
    for (let i = 0; i < 10_000; i++) {
      cache.set(`k${i}`, 'x');
      if (i % 40 === 0) assert.equal(cache.get('hot'), 'H', `after ${i + 1} stores`);
    }
    assert.equal(cache.get('cold'), undefined);
  });

  it('stores the key it is given to own, and tallies what its entries weigh as they come and go', () => {
    const owned: string[] = [];
    const cache = new MemoCache<number>(4, {
      own: (key) => {
        owned.push(key);
        return key;
      },
      weigh: (key) => key.length,
    });
    cache.set('aa', 1);
    cache.set('bbb', 2);
    assert.equal(cache.weight, 5);
    cache.set('c', 3); // aa and bbb old
    cache.set('dddd', 4); // young: c, dddd
    assert.equal(cache.weight, 10);
    cache.set('e', 5); // aa and bbb dropped
    assert.equal(cache.weight, 6);
    assert.equal(cache.get('dddd'), 4); // revived: stored again under an owned key, its old copy kept until c's generation goes
    assert.deepEqual(owned, ['aa', 'bbb', 'c', 'dddd', 'e', 'dddd']);
    assert.equal(cache.weight, 10);
    assert.equal(cache.size, 4);
    cache.set('e', 50); // replaced in place
    assert.equal(cache.get('e'), 50);
    cache.set('f', 6); // c and the old dddd go
    assert.equal(cache.weight, 6);
    assert.equal(cache.get('c'), undefined);
    assert.equal(cache.get('dddd'), 4);
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.weight, 0);
    assert.equal(cache.get('e'), undefined);
  });
});
