/**
 * Pre-images are recalled (issue 19, shared design §2): the sections a compaction rewrote are kept in
 * `history/{cid}/preimages.json`, found by `memory_search` as source `bank_history`, told apart from
 * the bank's current text, read back by `history_read`, and carried by the index snapshot. The
 * compaction entries are planted as the commit protocol writes them, beside real consolidations.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import { decodeHistoryPreimages, encodeHistoryPreimages } from '../../../src/core/commit/history.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/core/recall/index-store.js';
import { bm25Engine } from '../../../src/search/bm25.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import type { Logger } from '../../../src/shared/log.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { plantCompaction } from '../../helpers/plant-compaction.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const warnings: string[] = [];
const logger: Logger = { debug: () => undefined, info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined };

const BEFORE =
  '# Progress\n\n## Done\n\n- 2026-02-10 the albatross migrations finished\n- 2026-02-12 the pelican importer shipped\n\n## Next\n\n- the heron exporter\n';
const DONE = '## Done\n\n- 2026-02-10 the albatross migrations finished\n- 2026-02-12 the pelican importer shipped\n';
const AFTER = '# Progress\n\n## Done\n\n- February: migrations finished, one importer shipped (digest)\n\n## Next\n\n- the heron exporter\n';
const CID = '20260305T120000-cmp001';
const COMMITTED = '2026-03-05T12:00:00.000Z';

function makeCore(storage: StorageDriver, llm?: ScriptedLlm): Core {
  return createCore({
    storage,
    logger,
    clock: steppingClock('2026-03-01T09:00:00.000Z', 1000),
    ...(llm ? { llm: llm.client() } : {}),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
  });
}

/** A space with one consolidation that wrote progress.md, then a compaction that rewrote its Done section. */
async function compacted() {
  const storage = createMemoryDriver();
  const llm = await startScriptedLlm([{ reply: plan([rewrite('progress.md', BEFORE)]) }]);
  servers.push(llm);
  const core = makeCore(storage, llm);
  await core.spaces.create(owner, { space_id: 'proj' });
  await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'work of the week, written up in the bank' });
  assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
  await plantCompaction(storage, 'proj', {
    id: CID,
    committed_at: COMMITTED,
    sections: [{ filename: 'progress.md', path: ['Progress', 'Done'], content: DONE }],
    bank: { 'progress.md': AFTER },
  });
  return { storage, core };
}

describe('pre-images in memory_search', () => {
  it('finds an earlier version of a bank section by the words it had, and says what it is', async () => {
    const { core } = await compacted();
    const { results } = await core.recall.search(owner, { space_id: 'proj', query: 'pelican importer', limit: 5 });
    const hit = results[0];
    assert.equal(hit?.source, 'bank_history', JSON.stringify(results));
    assert.equal(hit.ref, 'progress.md#Progress > Done');
    assert.equal(hit.filename, 'progress.md');
    assert.deepEqual(hit.path, ['Progress', 'Done']);
    assert.equal(hit.compaction_id, CID);
    assert.equal(hit.superseded_at, COMMITTED);
    assert.match(hit.note ?? '', /earlier version of this bank section.*not the bank's current text/);
    assert.equal(hit.level, null);
    assert.match(hit.text, /2026-02-12 the pelican importer shipped/);
    assert.ok(!results.some((other) => other.source === 'bank' && other.text.includes('pelican')), 'the bank no longer says it');
  });

  it('tells the live bank section and its earlier version apart, in memory_search and memory_context', async () => {
    const { core } = await compacted();
    const { results } = await core.recall.search(owner, { space_id: 'proj', query: 'migrations finished', limit: 10 });
    const current = results.find((hit) => hit.source === 'bank');
    const earlier = results.find((hit) => hit.source === 'bank_history');
    assert.equal(current?.ref, 'progress.md#Progress > Done');
    assert.equal(earlier?.ref, 'progress.md#Progress > Done');
    assert.match(current?.text ?? '', /\(digest\)/);
    assert.equal(current?.compaction_id, undefined);
    assert.match(earlier?.text ?? '', /albatross/);
    assert.equal(earlier?.compaction_id, CID);
    const context = await core.recall.context(owner, { space_id: 'proj', query: 'migrations finished', max_tokens: 4000 });
    assert.match(context.text, /^- \[bank +progress\.md#Progress > Done\] .*\(digest\)/m);
    assert.match(context.text, /^- \[bank_history superseded 2026-03-05 12:00 progress\.md#Progress > Done\] .*albatross/m);
  });

  it('answers its filters: sources, levels, and a time range by when the section was replaced', async () => {
    const { core } = await compacted();
    const search = async (extra: Record<string, unknown>) =>
      (await core.recall.search(owner, { space_id: 'proj', query: 'migrations finished', limit: 20, ...extra })).results.map((hit) => hit.source);
    assert.deepEqual(await search({ sources: ['bank_history'] }), ['bank_history']);
    assert.deepEqual(await search({ sources: ['bank'] }), ['bank']);
    assert.ok(!(await search({ levels: [0] })).includes('bank_history'), 'a pre-image has no level, like a bank section');
    assert.ok((await search({ since: '2026-03-05T00:00:00Z' })).includes('bank_history'));
    assert.ok((await search({ until: '2026-03-06T00:00:00Z', since: '2026-03-05T12:00:00Z' })).includes('bank_history'));
    assert.ok(!(await search({ since: '2026-03-05T12:00:01Z' })).includes('bank_history'), 'replaced before the range');
    assert.ok(!(await search({ until: '2026-03-05T11:59:59Z' })).includes('bank_history'), 'replaced after the range');
    await assert.rejects(
      core.recall.search(owner, { space_id: 'proj', query: 'x', sources: ['bank_past'] }),
      (error) => isLiveMemError(error, 'invalid_input') && /use live, history, bank, bank_history, synthesis, summary/.test(error.message),
    );
  });

  it('leaves a damaged preimages.json out with a warning, and indexes it once repaired', async () => {
    const { storage, core } = await compacted();
    const damaged = '20260306T120000-cmp002';
    await plantCompaction(storage, 'proj', {
      id: damaged,
      committed_at: '2026-03-06T12:00:00.000Z',
      sections: [{ filename: 'progress.md', path: ['Progress', 'Next'], content: '## Next\n\n- the kingfisher dashboard\n' }],
    });
    const good = await storage.get(`proj/history/${damaged}/preimages.json`);
    await storage.put(`proj/history/${damaged}/preimages.json`, '{"version": 1, "sections": [{"filename": "progress.md"}]}');
    warnings.length = 0;
    const found = await core.recall.search(owner, { space_id: 'proj', query: 'pelican kingfisher' });
    assert.deepEqual(
      found.results.map((hit) => [hit.source, hit.compaction_id]),
      [['bank_history', CID]],
      'the other compaction is still found',
    );
    assert.ok(
      warnings.some(
        (line) => line.includes(`proj/history/${damaged}/preimages.json holds a section (#0) without`) && line.includes('the search index leaves it out'),
      ),
      warnings.join('\n'),
    );
    const listed = await core.history.list(owner, { space_id: 'proj' });
    assert.deepEqual(
      listed.consolidations.slice(0, 2).map((entry) => entry.consolidation_id),
      [damaged, CID],
      'history_list still lists it (from its record)',
    );
    await assert.rejects(core.history.read(owner, { space_id: 'proj', consolidation_id: damaged }), (error) => isLiveMemError(error, 'storage_error'));

    await storage.put(`proj/history/${damaged}/preimages.json`, good?.body as Buffer);
    const repaired = await core.recall.search(owner, { space_id: 'proj', query: 'kingfisher dashboard' });
    assert.equal(repaired.results[0]?.compaction_id, damaged, 'not marked indexed while damaged: read again');
  });
});

describe('pre-images in history_list and history_read', () => {
  it('lists each entry with its kind: a consolidation its notes, a compaction its files and pre-images', async () => {
    const { core } = await compacted();
    const { consolidations } = await core.history.list(owner, { space_id: 'proj' });
    const [compaction, consolidation] = consolidations;
    assert.equal(compaction?.kind, 'compaction');
    assert.equal(compaction?.preimages_count, 1);
    assert.equal(compaction?.notes_count, undefined);
    assert.deepEqual(compaction?.bank_files, [{ filename: 'progress.md', kind: 'updated' }]);
    assert.equal(consolidation?.kind, 'consolidation', 'a record without kind is a consolidation');
    assert.equal(consolidation?.notes_count, 1);

    const read = await core.history.read(owner, { space_id: 'proj', consolidation_id: CID });
    assert.equal(read.consolidation.kind, 'compaction');
    assert.deepEqual(read.notes, []);
    assert.deepEqual(read.preimages, [{ filename: 'progress.md', path: ['Progress', 'Done'], content: DONE }]);
    assert.equal(read.total, 1);
    const older = await core.history.read(owner, { space_id: 'proj', consolidation_id: consolidation?.consolidation_id as string });
    assert.equal(older.notes.length, 1);
    assert.deepEqual(older.preimages, []);
  });

  it('pre-images files keep every section whole and refuse what is not theirs', () => {
    const sections = [
      { filename: 'progress.md', path: ['Progress', 'Done'], content: DONE },
      { filename: 'notes.md', path: [], content: 'text before any heading ✓ 日本語\n' },
    ];
    assert.deepEqual(decodeHistoryPreimages(Buffer.from(encodeHistoryPreimages(sections)), 'p.json'), sections);
    for (const bad of ['not json', '{"version":2,"sections":[]}', '{"version":1,"sections":[{"filename":"a.md","path":"A","content":""}]}', '{"version":1}']) {
      assert.throws(
        () => decodeHistoryPreimages(Buffer.from(bad), 'proj/history/c1/preimages.json'),
        (error) => isLiveMemError(error, 'storage_error') && error.data.damaged === true && /proj\/history\/c1\/preimages\.json/.test(error.message),
      );
    }
  });
});

describe('pre-images in the index snapshot', () => {
  it('a new process finds them from the snapshot, which covers the compaction (doctor agrees)', async () => {
    const { storage, core } = await compacted();
    await core.recall.search(owner, { space_id: 'proj', query: 'pelican' });
    await core.recall.rebuildIndex('proj');
    const [key] = (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'));
    const { header } = decodeSnapshot((await storage.get(key as string))!.body, bm25Engine);
    assert.ok(header.history.includes(CID), 'the compaction is covered');
    assert.deepEqual(header.preimages?.[CID], { committed_at: COMMITTED, sections: [{ filename: 'progress.md', path: ['Progress', 'Done'] }] });
    const doctor = await core.doctor(owner, { space_id: 'proj' });
    const index = doctor.findings.filter((finding) => finding.check === 'index');
    assert.ok(index.length > 0 && index.every((finding) => finding.status === 'ok'), JSON.stringify(index));

    const read: string[] = [];
    const spy: StorageDriver = Object.create(storage, {
      get: {
        value: (key: string) => {
          read.push(key);
          return storage.get(key);
        },
      },
    });
    const cold = makeCore(spy);
    const { results } = await cold.recall.search(owner, { space_id: 'proj', query: 'pelican importer', limit: 1 });
    assert.equal(results[0]?.source, 'bank_history');
    assert.equal(results[0]?.compaction_id, CID);
    assert.equal(results[0]?.superseded_at, COMMITTED);
    assert.ok(!read.includes(`proj/history/${CID}/record.json`), `the compaction was not indexed again: ${read.join(', ')}`);
  });

  it('a snapshot written before compaction existed, listing a compaction as indexed, has its pre-images read again', async () => {
    const { storage, core } = await compacted();
    await core.recall.search(owner, { space_id: 'proj', query: 'pelican' });
    await core.recall.rebuildIndex('proj');
    const [key] = (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'));
    const decoded = decodeSnapshot((await storage.get(key as string))!.body, bm25Engine);
    // What an older process writes: the compaction in `history` (it had no notes to read), no `preimages`, no p: document.
    const { preimages: _dropped, vectors: _vectors, ...legacy } = decoded.header;
    for (const id of [...decoded.index.ids()]) if (id.startsWith('p:')) decoded.index.remove(id);
    await storage.delete(key as string);
    await storage.put(key as string, encodeSnapshot(legacy, decoded.index));

    const cold = makeCore(storage);
    const { results } = await cold.recall.search(owner, { space_id: 'proj', query: 'pelican importer', limit: 1 });
    assert.equal(results[0]?.source, 'bank_history', JSON.stringify(results));
  });
});
