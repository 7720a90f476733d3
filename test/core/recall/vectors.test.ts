import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptVectorsError, createVectorStore, loadVectorStore, VectorDimensionError, type VectorStore } from '../../../src/core/recall/vectors.js';

const v = (...values: number[]) => Float32Array.from(values);

/** A seeded generator, so a failing case replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

function randomStore(count: number, dims: number, seed = 1): { store: VectorStore; vectors: Map<string, Float32Array> } {
  const next = random(seed);
  const store = createVectorStore();
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < count; i++) {
    const vector = Float32Array.from({ length: dims }, next);
    vectors.set(`doc-${i}`, vector);
    store.set(`doc-${i}`, vector);
  }
  return { store, vectors };
}

/** The reference ranking: cosine in doubles, sorted, equal scores by id (as the store breaks them). */
function naive(vectors: Map<string, Float32Array>, query: Float32Array, limit: number): string[] {
  const norm = (x: Float32Array) => Math.sqrt(x.reduce((sum, value) => sum + value * value, 0));
  const cosine = (a: Float32Array) => a.reduce((sum, value, i) => sum + value * (query[i] as number), 0) / norm(a) / norm(query);
  return [...vectors]
    .map(([id, vector]) => ({ id, score: cosine(vector) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, limit)
    .map((hit) => hit.id);
}

describe('vector store', () => {
  it('ranks the nearest vectors first, by cosine', () => {
    const store = createVectorStore();
    store.set('east', v(1, 0, 0));
    store.set('north-east', v(1, 1, 0));
    store.set('north', v(0, 5, 0));
    store.set('west', v(-2, 0, 0));
    const hits = store.search(v(3, 0.1, 0), { limit: 10 });
    assert.deepEqual(
      hits.map((h) => h.id),
      ['east', 'north-east', 'north', 'west'],
    );
    assert.ok(Math.abs((hits[0]?.score ?? 0) - 0.99944) < 1e-4);
    assert.ok(Math.abs((hits[3]?.score ?? 0) + 0.99944) < 1e-4);
    assert.deepEqual(
      store.search(v(3, 0.1, 0), { limit: 2 }).map((h) => h.id),
      ['east', 'north-east'],
    );
    assert.deepEqual(store.search(v(3, 0.1, 0), { limit: 0 }), []);
  });

  it('stores vectors normalised, replaces on set, and breaks equal scores by id', () => {
    const store = createVectorStore();
    store.set('a', v(3, 4));
    assert.deepEqual(
      [...(store.get('a') ?? [])].map((x) => Math.round(x * 1e6) / 1e6),
      [0.6, 0.8],
    );
    store.set('a', v(0, 2));
    assert.equal(store.size, 1);
    assert.deepEqual([...(store.get('a') ?? [])], [0, 1]);
    store.set('c', v(0, 7));
    store.set('b', v(0, 1));
    assert.deepEqual(
      store.search(v(0, 1), { limit: 3 }).map((h) => h.id),
      ['a', 'b', 'c'],
    );
    assert.equal(store.get('missing'), undefined);
  });

  it('matches a reference ranking on random vectors, for dimensions that do not fill the SIMD lanes', () => {
    for (const dims of [1, 5, 8, 37, 384]) {
      const { store, vectors } = randomStore(500, dims, dims);
      const next = random(1000 + dims);
      for (let q = 0; q < 5; q++) {
        const query = Float32Array.from({ length: dims }, next);
        assert.deepEqual(
          store.search(query, { limit: 10 }).map((h) => h.id),
          naive(vectors, query, 10),
          `dims ${dims}`,
        );
      }
    }
  });

  it('asks the filter and returns only what it keeps', () => {
    const { store, vectors } = randomStore(300, 16);
    const query = Float32Array.from({ length: 16 }, random(7));
    const even = (id: string) => Number(id.slice(4)) % 2 === 0;
    const hits = store.search(query, { limit: 20, filter: even });
    assert.equal(hits.length, 20);
    const kept = new Map([...vectors].filter(([id]) => even(id)));
    assert.deepEqual(
      hits.map((h) => h.id),
      naive(kept, query, 20),
    );
    assert.deepEqual(store.search(query, { limit: 5, filter: () => false }), []);
  });

  it('deletes by moving the last row into the hole, keeping every other vector', () => {
    const { store, vectors } = randomStore(100, 12);
    for (const id of ['doc-0', 'doc-50', 'doc-99', 'doc-42', 'missing']) {
      store.delete(id);
      vectors.delete(id);
    }
    assert.equal(store.size, 96);
    assert.equal(store.has('doc-50'), false);
    assert.deepEqual([...store.ids()].sort(), [...vectors.keys()].sort());
    const query = Float32Array.from({ length: 12 }, random(3));
    assert.deepEqual(
      store.search(query, { limit: 96 }).map((h) => h.id),
      naive(vectors, query, 96),
    );
    for (const [id, vector] of vectors)
      assert.deepEqual(
        store.search(vector, { limit: 1 }).map((h) => h.id),
        [id],
      );
    store.set('doc-new', v(...Array.from({ length: 12 }, (_, i) => i)));
    assert.equal(store.size, 97);
  });

  it('grows past its first memory and keeps every vector', () => {
    const { store, vectors } = randomStore(3_000, 40);
    for (const id of ['doc-0', 'doc-1234', 'doc-2999']) assert.deepEqual(store.search(vectors.get(id) as Float32Array, { limit: 1 })[0]?.id, id);
  });

  it('refuses a vector of another dimension, an empty one, a non-finite one and an id with a newline', () => {
    const store = createVectorStore();
    store.set('a', v(1, 2, 3));
    assert.equal(store.dims, 3);
    assert.throws(
      () => store.set('b', v(1, 2)),
      (e) => e instanceof VectorDimensionError && e.expected === 3 && e.actual === 2,
    );
    assert.throws(() => store.search(v(1, 2, 3, 4), { limit: 1 }), VectorDimensionError);
    assert.throws(() => store.set('b', v()), /at least one dimension/);
    assert.throws(() => store.set('b', v(1, Number.NaN, 3)), /finite/);
    assert.equal(store.has('b'), false, 'a refused vector leaves no row behind');
    assert.throws(() => createVectorStore().set('a', v(Infinity)), /finite/);
    assert.throws(() => store.set('a\nb', v(1, 2, 3)), /newline/);
    const fixed = createVectorStore({ dims: 4 });
    assert.throws(() => fixed.set('a', v(1, 2, 3)), VectorDimensionError);
    store.delete('a');
    assert.throws(() => store.set('b', v(1, 2)), VectorDimensionError, 'the dimension outlives the last vector');
  });

  it('answers an empty store with nothing', () => {
    assert.deepEqual(createVectorStore().search(v(1, 2), { limit: 5 }), []);
  });

  it('serializes and loads to a store that answers the same', () => {
    for (const dims of [7, 64]) {
      const { store } = randomStore(200, dims, dims);
      store.delete('doc-3');
      store.set('doc-é/ü', Float32Array.from({ length: dims }, random(9)));
      const loaded = loadVectorStore(store.serialize());
      assert.equal(loaded.size, store.size);
      assert.equal(loaded.dims, dims);
      assert.deepEqual([...loaded.ids()].sort(), [...store.ids()].sort());
      assert.deepEqual(loaded.get('doc-é/ü'), store.get('doc-é/ü'));
      const next = random(dims * 31);
      for (let q = 0; q < 5; q++) {
        const query = Float32Array.from({ length: dims }, next);
        assert.deepEqual(loaded.search(query, { limit: 15 }), store.search(query, { limit: 15 }));
      }
      assert.ok(loaded.serialize().equals(store.serialize()));
      loaded.set('after-load', Float32Array.from({ length: dims }, next));
      assert.equal(loaded.size, store.size + 1);
    }
    const empty = loadVectorStore(createVectorStore().serialize());
    assert.equal(empty.size, 0);
    const emptyDims = loadVectorStore(createVectorStore({ dims: 5 }).serialize());
    assert.equal(emptyDims.dims, 5);
  });

  it('throws CorruptVectorsError on a truncated, altered or foreign buffer', () => {
    const { store } = randomStore(20, 8);
    const good = store.serialize();
    const flipped = (at: number) => {
      const copy = Buffer.from(good);
      copy[at] = (copy[at] as number) ^ 0x10;
      return copy;
    };
    const bad: Array<[string, Buffer]> = [
      ['empty', Buffer.alloc(0)],
      ['header only', good.subarray(0, 20)],
      ['truncated by one byte', good.subarray(0, good.length - 1)],
      ['truncated in the matrix', good.subarray(0, Math.floor(good.length / 2))],
      ['a trailing byte', Buffer.concat([good, Buffer.from([0])])],
      ['another magic', Buffer.concat([Buffer.from('NOPE'), good.subarray(4)])],
      ['another version', flipped(4)],
      ['a bit flip in the count', flipped(12)],
      ['a bit flip in the ids', flipped(24)],
      ['a bit flip in the matrix', flipped(good.length - 100)],
      ['a bit flip in the checksum', flipped(good.length - 1)],
      ['JSON', Buffer.from(JSON.stringify({ hello: 'world', padding: 'x'.repeat(100) }))],
    ];
    for (const [what, buffer] of bad) assert.throws(() => loadVectorStore(buffer), CorruptVectorsError, what);
  });
});
