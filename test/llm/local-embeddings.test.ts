/**
 * The local embedding model (LIVE_MEM_EMBEDDINGS_LOCAL) on a tiny model kept as a fixture
 * (fixtures/embeddings/live-mem/tiny-minilm: all-MiniLM-L6-v2's architecture, 2 layers of 32
 * dimensions, random weights), written with the reference vectors beside it by
 * scripts/make-tiny-embedding-model.ts, whose plain forward pass computes them without transformers.js
 * or onnxruntime: the real library, its tokenizer and the runtime must give the same numbers.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createCore } from '../../src/core/core.js';
import type { EmbeddingsClient } from '../../src/llm/embeddings.js';
import { createLocalEmbeddings } from '../../src/llm/local-embeddings.js';
import { LlmError } from '../../src/llm/types.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { requireTransformersOrSkip } from '../helpers/transformers.js';

const DIR = fileURLToPath(new URL('../../fixtures/embeddings/', import.meta.url));
const MODEL = 'live-mem/tiny-minilm';
const reference = JSON.parse(readFileSync(`${DIR}${MODEL}/reference.json`, 'utf8')) as {
  dims: number;
  texts: Array<{ text: string; fp32: number[]; q8: number[] }>;
};

const worst = (actual: Float32Array[], dtype: 'fp32' | 'q8') =>
  Math.max(...actual.flatMap((vector, i) => [...vector].map((value, j) => Math.abs(value - (reference.texts[i]?.[dtype][j] as number)))));

describe('local embeddings (transformers.js, a tiny model folder)', () => {
  if (!requireTransformersOrSkip('local embeddings')) return;
  it('computes the reference vectors, int8 by default and float32 when asked', async () => {
    const texts = reference.texts.map((entry) => entry.text);
    // One text a pass: dynamic int8 quantization scales by the whole batch, padding included.
    const q8 = createLocalEmbeddings({ model: MODEL, dir: DIR, batchSize: 1 });
    assert.equal(q8.label, `${MODEL} (local, q8)`);
    assert.equal(q8.local, true);
    const vectors = await q8.embed(texts);
    assert.equal(vectors.length, texts.length);
    assert.ok(vectors.every((vector) => vector.length === reference.dims));
    assert.ok(worst(vectors, 'q8') < 1e-5, `int8: off by ${worst(vectors, 'q8')}`);

    // Float32 does not depend on the batch: all at once, padded to the longest.
    const fp32 = createLocalEmbeddings({ model: MODEL, dir: DIR, dtype: 'fp32' });
    const batched = await fp32.embed(texts);
    assert.ok(worst(batched, 'fp32') < 1e-5, `float32: off by ${worst(batched, 'fp32')}`);
    const differ = worst(vectors, 'fp32');
    assert.ok(differ > 1e-4 && differ < 0.05, `the int8 weights are the quantized file's, close to float32's (off by ${differ})`);
  });

  it('says where it looked when the model folder is missing, and never downloads with a folder set', async () => {
    const client = createLocalEmbeddings({ model: 'Xenova/all-MiniLM-L6-v2', dir: DIR });
    await assert.rejects(
      () => client.embed(['hello']),
      (error: unknown) => error instanceof LlmError && !error.retryable && /all-MiniLM-L6-v2/.test(error.message) && error.message.includes(DIR),
    );
  });

  it('serves hybrid search, reports its progress in space_info, and is embedded once: a new process loads the vectors', async () => {
    const storage = createMemoryDriver();
    let embedded = 0;
    const counting = (inner: EmbeddingsClient): EmbeddingsClient => ({
      ...inner,
      label: inner.label,
      embed: (texts, signal, report) => {
        embedded += texts.length;
        return inner.embed(texts, signal, report);
      },
    });
    const local = createLocalEmbeddings({ model: MODEL, dir: DIR });
    const core = createCore({ storage, embeddings: counting(local) });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 60; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `The car was parked in garage ${i} after the build` });
    assert.deepEqual((await core.spaces.info(owner, { space_id: 'proj' })).embeddings, { model: `${MODEL} (local, q8)`, state: 'not_loaded' });
    await core.recall.search(owner, { space_id: 'proj', query: 'garage' }); // starts the embeddings, 8 a call
    await core.idle();
    assert.deepEqual((await core.spaces.info(owner, { space_id: 'proj' })).embeddings, {
      model: `${MODEL} (local, q8)`,
      state: 'ready',
      documents: 60,
      embedded: 60,
    });
    const hybrid = await core.recall.search(owner, { space_id: 'proj', query: 'where is the car kept' });
    assert.equal(hybrid.mode, 'hybrid');
    await core.idle();

    embedded = 0;
    const next = createCore({ storage, embeddings: counting(createLocalEmbeddings({ model: MODEL, dir: DIR })) });
    const again = await next.recall.search(owner, { space_id: 'proj', query: 'where is the car kept' });
    await next.idle();
    assert.equal(again.mode, 'hybrid');
    assert.equal(embedded, 1, 'only the query');
    assert.deepEqual(
      again.results.map((hit) => hit.ref),
      hybrid.results.map((hit) => hit.ref),
    );
  });
});
