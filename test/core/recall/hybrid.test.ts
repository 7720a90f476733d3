import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import type { EmbeddingsClient } from '../../../src/llm/embeddings.js';
import type { Logger } from '../../../src/shared/log.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { plantCompaction } from '../../helpers/plant-compaction.js';
import { startScriptedEmbeddings, type ScriptedEmbeddings } from '../../helpers/scripted-embeddings.js';

const servers: ScriptedEmbeddings[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** Words the scripted model treats as one meaning: a question in other words finds the note. */
const SYNONYMS = { automobile: 'car', vehicle: 'car', parked: 'garage', stored: 'garage', kept: 'garage', where: 'garage' };

const warnings: string[] = [];
const logger: Logger = { debug: () => undefined, info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined };

async function space(storage: StorageDriver, embeddings?: EmbeddingsClient) {
  const core = createCore({ storage, logger, ...(embeddings ? { embeddings } : {}) });
  if (!(await storage.stat('proj/_meta.json'))) {
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: 'The car sits in garage B, level two' });
    for (let i = 0; i < 60; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Routine entry ${i} about the build pipeline` });
  }
  return core;
}

describe('hybrid memory_search (embeddings configured)', () => {
  it('finds a note said in other words, where BM25 alone finds nothing', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS });
    servers.push(model);
    const storage = createMemoryDriver();
    const lexical = await space(storage);
    const question = 'where is the automobile stored';
    assert.equal(
      (await lexical.recall.search(owner, { space_id: 'proj', query: question })).results.some((hit) => hit.text.includes('garage B')),
      false,
    );

    const core = await space(storage, model.client());
    await core.recall.search(owner, { space_id: 'proj', query: question }); // starts the embeddings
    await core.idle();
    const hybrid = await core.recall.search(owner, { space_id: 'proj', query: question, limit: 3 });
    assert.equal(hybrid.mode, 'hybrid');
    assert.match(hybrid.results[0]?.text ?? '', /garage B/);
    const embedded = model.requests.reduce((sum, request) => sum + request.inputCount, 0);
    assert.ok(embedded >= 61, `every document embedded (${embedded} inputs)`);
    assert.ok(
      model.requests.every((request) => request.inputCount <= 64),
      'in batches',
    );
  });

  it('a weak, misleading cosine ranking cannot push BM25’s top hits out of the top 5', async () => {
    // Sixty notes the model takes for the question itself (every word a synonym of the question's), none
    // holding its words; the five notes that answer it hold them all, and come after every decoy by cosine.
    const decoyWords = ['lunch', 'menu', 'salad', 'picnic', 'garden', 'tulips'];
    const synonyms = Object.fromEntries(decoyWords.map((word, i) => [word, ['invoice', 'payment', 'overdue'][i % 3] as string]));
    const model = await startScriptedEmbeddings({ synonyms });
    servers.push(model);
    const storage = createMemoryDriver();
    const core = createCore({ storage, logger, embeddings: model.client() });
    await core.spaces.create(owner, { space_id: 'proj' });
    const answers = ['ACME', 'Globex', 'Initech', 'Umbrella', 'Hooli'].map((client) => `The invoice payment of ${client} is overdue since the spring audit`);
    for (const content of answers) await core.notes.write(owner, { space_id: 'proj', category: 'observation', content });
    for (let i = 0; i < 60; i++)
      await core.notes.write(owner, {
        space_id: 'proj',
        category: 'observation',
        content: `${decoyWords[i % 6]} ${decoyWords[(i + 1) % 6]} ${decoyWords[(i + 2) % 6]}`,
      });
    for (let i = 0; i < 40; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Routine entry ${i} about the build pipeline` });
    const query = 'invoice payment overdue';
    await core.recall.search(owner, { space_id: 'proj', query }); // starts the embeddings
    await core.idle();
    const hybrid = await core.recall.search(owner, { space_id: 'proj', query, limit: 10 });
    assert.equal(hybrid.mode, 'hybrid');
    assert.deepEqual(
      hybrid.results
        .slice(0, 5)
        .map((hit) => hit.text)
        .sort(),
      [...answers].sort(),
      JSON.stringify(hybrid.results.map((hit) => hit.text)),
    );
  });

  it('weight 0 is BM25 alone: no query embedded', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS });
    servers.push(model);
    const storage = createMemoryDriver();
    const core = await space(storage, model.client());
    await core.recall.search(owner, { space_id: 'proj', query: 'car' }); // starts the embeddings
    await core.idle();
    const before = model.requests.length;
    const zero = createCore({ storage, logger, embeddings: model.client(), embeddingsWeight: 0 });
    const result = await zero.recall.search(owner, { space_id: 'proj', query: 'where is the automobile stored' });
    await zero.idle();
    assert.equal(result.mode, 'bm25');
    assert.equal(result.fallback, undefined);
    assert.equal(model.requests.length, before, 'nothing embedded: the vectors came from the snapshot');
  });

  it('keeps the vectors in the snapshot: a new process embeds only the query', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS });
    servers.push(model);
    const storage = createMemoryDriver();
    const first = await space(storage, model.client());
    await first.recall.search(owner, { space_id: 'proj', query: 'car' });
    await first.idle();
    // The vectors arrived after the first snapshot: the next one, due once they are all in, holds them.
    await first.recall.search(owner, { space_id: 'proj', query: 'car' });
    await first.idle();
    const before = model.requests.length;
    const second = await space(storage, model.client());
    const result = await second.recall.search(owner, { space_id: 'proj', query: 'where is the vehicle kept', limit: 1 });
    await second.idle();
    assert.equal(result.mode, 'hybrid');
    assert.match(result.results[0]?.text ?? '', /garage B/);
    assert.deepEqual(
      model.requests.slice(before).map((r) => r.inputCount),
      [1],
      'only the query was embedded',
    );
  });

  it('falls back to BM25 when the endpoint fails, says so once, and recovers later', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS, failFirst: 1000 });
    servers.push(model);
    warnings.length = 0;
    const core = await space(createMemoryDriver(), model.client());
    for (let i = 0; i < 3; i++) {
      const result = await core.recall.search(owner, { space_id: 'proj', query: 'garage' });
      await core.idle();
      assert.equal(result.mode, 'bm25');
      assert.match(result.results[0]?.text ?? '', /garage B/);
    }
    assert.equal(warnings.filter((w) => w.includes('embeddings')).length, 1, warnings.join('\n'));
  });

  it('stays BM25 alone, saying why, while more than a batch of documents has no vector yet', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS, failOn: [2] });
    servers.push(model);
    warnings.length = 0;
    const storage = createMemoryDriver();
    const core = await space(storage, model.client());
    for (let i = 0; i < 100; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `More work ${i} on the car` });
    await core.recall.search(owner, { space_id: 'proj', query: 'car' }); // the first batch of 64 lands, the second fails
    await core.idle();
    const partial = await core.recall.search(owner, { space_id: 'proj', query: 'car' });
    assert.equal(partial.mode, 'bm25');
    assert.equal(partial.fallback, "BM25 alone: the space's embeddings are being computed (64 of 161 documents)");
    assert.equal(model.requests.length, 2, 'no query embedded');
  });

  it('finds an earlier version of a bank section (a compaction pre-image) said in other words', async () => {
    const model = await startScriptedEmbeddings({ synonyms: SYNONYMS });
    servers.push(model);
    const storage = createMemoryDriver();
    await space(storage);
    await plantCompaction(storage, 'proj', {
      id: '20990101T000000-cmp001',
      committed_at: '2099-01-01T00:00:00.000Z',
      sections: [{ filename: 'facts.md', path: ['Facts', 'Parking'], content: '## Parking\n\nOur second car sits in garage D\n' }],
      bank: { 'facts.md': '# Facts\n\n## Parking\n\nSee the plan.\n' },
    });
    const core = await space(storage, model.client());
    const question = 'where is the automobile stored';
    await core.recall.search(owner, { space_id: 'proj', query: question }); // starts the embeddings
    await core.idle();
    const hybrid = await core.recall.search(owner, { space_id: 'proj', query: question, limit: 5, sources: ['bank_history'] });
    assert.equal(hybrid.mode, 'hybrid');
    assert.equal(hybrid.results[0]?.compaction_id, '20990101T000000-cmp001', JSON.stringify(hybrid.results));
    assert.match(hybrid.results[0]?.text ?? '', /garage D/);
    const lexical = await createCore({ storage, logger }).recall.search(owner, { space_id: 'proj', query: question, sources: ['bank_history'] });
    assert.deepEqual(lexical.results, [], 'BM25 alone does not find it');
  });
});
