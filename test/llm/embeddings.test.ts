import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createOpenAiEmbeddings } from '../../src/llm/embeddings.js';
import { LlmError } from '../../src/llm/types.js';
import { startScriptedEmbeddings, type ScriptedEmbeddings } from '../helpers/scripted-embeddings.js';

const servers: ScriptedEmbeddings[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function server(options: Parameters<typeof startScriptedEmbeddings>[0] = {}): Promise<ScriptedEmbeddings> {
  const started = await startScriptedEmbeddings(options);
  servers.push(started);
  return started;
}

const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * (b[i] as number), 0);

function unit(values: number[]): number[] {
  const length = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  return values.map((value) => value / length);
}

describe('OpenAI-compatible embeddings', () => {
  it('sends batches of 64 by default, asks for floats, and keeps the order of the inputs', async () => {
    const scripted = await server({ dims: 32 });
    const texts = Array.from({ length: 150 }, (_, i) => `note ${i} about topic${i % 7} and word${i}`);
    const vectors = await scripted.client().embed(texts);
    assert.deepEqual(
      scripted.requests.map((r) => r.inputCount),
      [64, 64, 22],
    );
    assert.deepEqual(
      scripted.requests.flatMap((r) => r.input),
      texts,
    );
    assert.ok(scripted.requests.every((r) => r.model === 'scripted-embed' && r.encodingFormat === 'float'));
    assert.equal(vectors.length, texts.length);
    texts.forEach((text, i) => {
      const vector = vectors[i] as Float32Array;
      assert.equal(vector.length, 32);
      unit(scripted.vectorOf(text)).forEach((expected, j) => assert.ok(Math.abs((vector[j] as number) - expected) < 1e-6, `text ${i}, dim ${j}`));
    });
  });

  it('returns vectors of unit length, close when the texts share words or synonyms', async () => {
    const scripted = await server({ dims: 256, synonyms: { car: 'automobile' } });
    const [car, automobile, boat] = (await scripted.client({ batchSize: 2 }).embed(['a red car', 'a red automobile', 'green boat sails'])) as [
      Float32Array,
      Float32Array,
      Float32Array,
    ];
    assert.equal(scripted.requests.length, 2);
    for (const vector of [car, automobile, boat]) assert.ok(Math.abs(norm(vector) - 1) < 1e-6);
    assert.ok(dot(car, automobile) > 0.99);
    assert.ok(dot(car, boat) < 0.5);
  });

  it('sends nothing for no input, and embeds an empty text as a zero vector rather than failing its batch', async () => {
    const scripted = await server();
    assert.deepEqual(await scripted.client().embed([]), []);
    assert.equal(scripted.requests.length, 0);
    const [empty, text] = (await scripted.client().embed(['', 'some words'])) as [Float32Array, Float32Array];
    assert.ok(empty.every((value) => value === 0));
    assert.ok(Math.abs(norm(text) - 1) < 1e-6);
  });

  it('labels itself with the model and the endpoint', async () => {
    const scripted = await server();
    assert.equal(scripted.client({ model: 'nomic-embed-text' }).label, `nomic-embed-text @ ${scripted.url}`);
  });

  it('turns a 5xx into a retryable LlmError, and answers again once the endpoint recovers', async () => {
    const scripted = await server({ failFirst: 1 });
    const client = scripted.client();
    await assert.rejects(
      client.embed(['hello']),
      (e) => e instanceof LlmError && e.retryable && e.status === 500 && /embeddings endpoint answered 500/.test(e.message),
    );
    assert.equal((await client.embed(['hello'])).length, 1);
  });

  it('turns a 429 into a retryable LlmError and a 400 or 401 into a final one', async () => {
    const limited = await server({ failFirst: 1, failStatus: 429 });
    await assert.rejects(limited.client().embed(['x']), (e) => e instanceof LlmError && e.retryable && e.status === 429);
    const refused = await server({ failFirst: 1, failStatus: 400 });
    await assert.rejects(refused.client().embed(['x']), (e) => e instanceof LlmError && !e.retryable && e.status === 400);
    const unauthorised = await server({ failFirst: 1, failStatus: 401 });
    await assert.rejects(unauthorised.client().embed(['x']), (e) => e instanceof LlmError && !e.retryable && /LIVE_MEM_EMBEDDINGS_API_KEY/.test(e.message));
  });

  it('fails the whole call when a later batch fails, sending no more batches', async () => {
    const scripted = await server({ failOn: [2] });
    await assert.rejects(scripted.client({ batchSize: 1 }).embed(['one', 'two', 'three']), (e) => e instanceof LlmError && e.retryable);
    assert.deepEqual(
      scripted.requests.map((r) => r.input),
      [['one'], ['two']],
    );
  });

  it('turns an unreachable endpoint and an abort into retryable LlmErrors', async () => {
    const closed = await startScriptedEmbeddings();
    await closed.close();
    const client = createOpenAiEmbeddings({ baseUrl: closed.url, apiKey: '', model: 'm' });
    await assert.rejects(client.embed(['x']), (e) => e instanceof LlmError && e.retryable && /cannot reach the embeddings endpoint/.test(e.message));
    const scripted = await server();
    await assert.rejects(scripted.client().embed(['x'], AbortSignal.abort()), (e) => e instanceof LlmError && e.retryable && /aborted/.test(e.message));
  });
});
