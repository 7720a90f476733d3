/**
 * Forget, with a receipt (issue 21): notes removed for good from live/, from the notes.json of the
 * consolidation that took them (its record noting it), from summaries, from the search index of this
 * and every other process (two cores on one store are two processes) and its snapshots; bank files
 * that may derive from them and backups that still hold them reported; a dry run changes nothing; a
 * forget cut short at any point is finished by the next holder of the space's lease.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ownerCaller } from '../../../src/core/caller.js';
import { checkPending } from '../../../src/core/commit/pending.js';
import { lockSpace } from '../../../src/core/commit/space-lock.js';
import { commitKinds, createCore, type Core } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { forgetModelStep, keysHolding, SMALL_SUMMARIES, WORD } from '../../helpers/forget.js';
import { assertCoverage, storedSummaries } from '../../helpers/summaries.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const SMALL = SMALL_SUMMARIES;

async function setup(storage: StorageDriver = createMemoryDriver(), fault?: (point: string) => Promise<void>) {
  const server = await startScriptedLlm([forgetModelStep]);
  servers.push(server);
  const clock = steppingClock('2026-03-01T10:00:00.000Z', 1000); // one clock for every process: ids in the order things happened
  const make = (extra: { fault?: (point: string) => Promise<void>; storage?: StorageDriver } = {}) =>
    createCore({
      storage,
      clock,
      llm: server.client(),
      consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
      summaries: { auto: false },
      compaction: { auto: false },
      ...extra,
    });
  const core = make();
  await core.spaces.create(owner, { space_id: 'proj' });
  const note = async (content: string) =>
    (await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: content.padEnd(500, '.') })).filename;
  const consolidatedWord = await note(`The ${WORD} password policy was discussed`);
  const consolidatedOther = await note('The giraffe deploy went fine');
  const consolidated = (await core.consolidation.consolidate(owner, { space_id: 'proj' })).consolidations?.[0] as string;
  const liveWord = await note(`A live ${WORD} remark`);
  const liveOther = await note('A live giraffe remark');
  const more = [await note('giraffe one'), await note('giraffe two')];
  return { core, storage, make, consolidated, consolidatedWord, consolidatedOther, liveWord, liveOther, more, fault };
}

async function storeState(storage: StorageDriver): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  for (const key of await listKeys(storage, '')) if (!key.includes('/lock.json')) state.set(key, (await storage.get(key))?.body.toString('base64') ?? '');
  return state;
}

/** Everything a reader of `core` can find of `word`, by path. */
async function findable(core: Core, word: string, consolidated: string): Promise<string[]> {
  const found: string[] = [];
  const search = await core.recall.search(owner, { space_id: 'proj', query: word, limit: 50 });
  for (const hit of search.results) if (hit.text.includes(word)) found.push(`memory_search:${hit.source}:${hit.ref}`);
  const live = await core.notes.search(owner, { space_id: 'proj', query: word });
  for (const note of live.notes) found.push(`live_search:${note.filename}`);
  for (const note of (await core.notes.read(owner, { space_id: 'proj' })).notes) if (note.content.includes(word)) found.push(`live_read:${note.filename}`);
  const history = await core.history.read(owner, { space_id: 'proj', consolidation_id: consolidated });
  for (const note of history.notes) if (note.content.includes(word)) found.push(`history_read:${note.filename}`);
  // Asked about what the notes said, without the word itself (the answer names its query).
  const context = await core.recall.context(owner, { space_id: 'proj', query: 'password policy remark', max_tokens: 8000 });
  if (context.text.includes(word)) found.push('memory_context');
  return found;
}

describe('memory_forget', () => {
  it('removes notes from every place, in this and another warm process and a new one; the receipt lists each place', async () => {
    const s = await setup();
    const { core, storage } = s;
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    await core.recall.rebuildIndex('proj'); // a snapshot in the store
    await core.backups.create(owner, { space_id: 'proj' });
    const warm = s.make(); // another process, warm before the forget
    assert.ok((await findable(warm, WORD, s.consolidated)).length >= 5, 'found everywhere before');
    assert.ok((await findable(core, WORD, s.consolidated)).length >= 5);

    const preview = await core.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], reason: 'leaked' });
    assert.equal(preview.status, 'ok');
    assert.equal(preview.dry_run, true);
    assert.ok((await keysHolding(storage, WORD)).length > 0);

    const receipt = await warm.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], confirm: true, reason: 'leaked' });
    assert.equal(receipt.status, 'ok');
    assert.ok(receipt.dry_run === false);
    assert.equal(receipt.notes_count, 2);
    assert.deepEqual(receipt.live, [s.liveWord]);
    assert.deepEqual(receipt.history, [{ consolidation_id: s.consolidated, file: `proj/history/${s.consolidated}/notes.json`, notes: [s.consolidatedWord] }]);
    assert.ok(receipt.index_documents.includes(`n:${s.liveWord}`) && receipt.index_documents.includes(`h:${s.consolidated}/${s.consolidatedWord}`));
    assert.ok(receipt.summaries.length > 0, 'summaries covering the notes removed');
    assert.ok(receipt.snapshots.length > 0, 'snapshots deleted');
    assert.deepEqual(
      receipt.bank_review.map((entry) => entry.consolidation_id),
      [s.consolidated],
    );
    assert.ok(receipt.bank_review[0]?.bank_files.includes('progress.md'));
    // Found by the sections that cite the note, read before the forget took it out of the provenance.
    assert.equal(receipt.bank_review[0]?.basis, 'citation');
    assert.ok(
      receipt.bank_review[0]?.sections?.some((section) => section.filename === 'activeContext.md'),
      JSON.stringify(receipt.bank_review),
    );
    assert.equal(receipt.backups.length, 1, 'the backup still holds them');
    assert.equal(receipt.backups_purged, false);
    assert.match(receipt.backups_note, /still hold/);
    // Preview and receipt name the same places.
    assert.deepEqual(preview.live, receipt.live);
    assert.deepEqual(preview.history, receipt.history);
    assert.deepEqual(preview.summaries, receipt.summaries);

    // Nothing of the text is left in the store (backups aside), nor findable from any process.
    assert.deepEqual(await keysHolding(storage, WORD), []);
    assert.deepEqual(await findable(core, WORD, s.consolidated), [], 'the other warm process');
    assert.deepEqual(await findable(warm, WORD, s.consolidated), [], 'the forgetting process');
    const fresh = s.make();
    assert.deepEqual(await findable(fresh, WORD, s.consolidated), [], 'a new process');
    // Out of every index (their vectors with them), not only hidden from answers; and the snapshots they write hold none of it.
    for (const process of [core, warm, fresh]) {
      const index = await process.recall.indexOf('proj');
      for (const id of receipt.index_documents) assert.equal(index.index.has(id), false, id);
      await index.saveSnapshot();
    }
    assert.equal((await listKeys(storage, 'proj/_index/')).length > 0, true);
    assert.deepEqual(await keysHolding(storage, WORD), []);
    // The rest is untouched.
    const others = await core.history.read(owner, { space_id: 'proj', consolidation_id: s.consolidated });
    assert.deepEqual(
      others.notes.map((n) => n.filename),
      [s.consolidatedOther],
    );
    assert.deepEqual(others.consolidation.notes, [s.consolidatedOther]);
    assert.deepEqual(
      others.consolidation.forgotten?.map((entry) => [entry.forget_id, entry.filenames, entry.reason]),
      [[receipt.forget_id, [s.consolidatedWord], 'leaked']],
    );
    assert.ok((await core.notes.search(owner, { space_id: 'proj', query: 'giraffe' })).notes.length >= 3);
    // The bank's sources no longer name it: provenance and dispositions are rewritten with the notes.
    const cited = others.consolidation.provenance.flatMap((entry) => entry.notes);
    assert.ok(cited.length > 0 && !cited.includes(s.consolidatedWord) && cited.includes(s.consolidatedOther), JSON.stringify(cited));
    assert.ok(!others.consolidation.dispositions.some((d) => d.note === s.consolidatedWord));
    // So does what the retention check found of each note (core/retention): what a note lost quotes it.
    assert.deepEqual(
      others.consolidation.retention.map((entry) => ('note' in entry ? entry.note : entry.filename)),
      [s.consolidatedOther],
    );
    const explained = await core.sources.explain(owner, { space_id: 'proj', filename: 'activeContext.md' });
    assert.deepEqual(
      explained.notes.map((n) => n.filename),
      [s.consolidatedOther],
    );

    // history_list shows the forget: who, why, how many, which consolidations; never the text.
    const listed = await core.history.list(owner, { space_id: 'proj' });
    const entry = listed.consolidations[0];
    assert.equal(entry?.kind, 'forget');
    assert.equal(entry?.action, 'forget');
    assert.equal(entry?.reason, 'leaked');
    assert.equal(entry?.notes_count, 2);
    assert.deepEqual(entry?.consolidations, [s.consolidated]);

    // The next summaries run writes the summaries again, without the notes.
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    await assertCoverage(storage, 'proj', [s.consolidatedOther, s.liveOther, ...s.more]);
    for (const summary of await storedSummaries(storage, 'proj')) {
      assert.ok(!summary.covers.some((ref) => ref.startsWith(s.consolidatedWord) || ref.startsWith(s.liveWord)));
    }
    assert.deepEqual(await keysHolding(storage, WORD), []);

    // The doctor finds the space consistent (the counters keep the notes processed).
    const doctor = await s.make().doctor(owner, {});
    assert.deepEqual(
      doctor.findings.filter((f) => f.status !== 'ok' && f.space_id === 'proj'),
      [],
    );
  });

  it('a dry run changes nothing; unknown refs, no selection, both selections: a clear error, nothing changed', async () => {
    const s = await setup();
    const before = await storeState(s.storage);
    const preview = await s.core.forget.forget(owner, { space_id: 'proj', refs: [s.liveWord] });
    assert.equal(preview.status, 'ok');
    assert.equal(preview.dry_run, true);
    assert.match(preview.message, /nothing was changed/);
    assert.deepEqual(preview.live, [s.liveWord]);
    const missing = '20260101T000000_ghost_observation_00000000.md';
    await assert.rejects(
      s.core.forget.forget(owner, { space_id: 'proj', refs: [s.liveWord, missing], confirm: true }),
      (error: unknown) => isLiveMemError(error, 'not_found') && error.message.includes(missing) && error.message.includes('nothing was forgotten'),
    );
    await assert.rejects(s.core.forget.forget(owner, { space_id: 'proj', refs: ['../etc/passwd'], confirm: true }), (e: unknown) =>
      isLiveMemError(e, 'invalid_input'),
    );
    await assert.rejects(s.core.forget.forget(owner, { space_id: 'proj', confirm: true }), (e: unknown) => isLiveMemError(e, 'invalid_input'));
    await assert.rejects(s.core.forget.forget(owner, { space_id: 'proj', refs: [s.liveWord], query: WORD, confirm: true }), (e: unknown) =>
      isLiveMemError(e, 'invalid_input'),
    );
    await assert.rejects(s.core.forget.forget(owner, { space_id: 'proj', query: 'nothingmatchesthis', confirm: true }), (e: unknown) =>
      isLiveMemError(e, 'not_found'),
    );
    assert.deepEqual(await storeState(s.storage), before);
  });

  it('a query selects notes (live and consolidated, never bank text): the dry run lists them, confirm forgets them', async () => {
    const s = await setup();
    const preview = await s.core.forget.forget(owner, { space_id: 'proj', query: WORD });
    assert.deepEqual(preview.notes.map((n) => n.filename).sort(), [s.consolidatedWord, s.liveWord].sort());
    const done = await s.core.forget.forget(owner, { space_id: 'proj', query: WORD, confirm: true, reason: 'gdpr' });
    assert.equal(done.notes_count, 2);
    assert.deepEqual(await findable(s.core, WORD, s.consolidated), []);
  });

  it('purge_backups: the backups are rewritten without the notes, their checksums with them, and still restore', async () => {
    const s = await setup();
    await s.core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    await s.core.backups.create(owner, { space_id: 'proj' });
    const holding = async () => {
      const found = [];
      for (const key of await listKeys(s.storage, '_backups/')) if ((await s.storage.get(key))?.body.includes(WORD)) found.push(key);
      return found;
    };
    assert.ok((await holding()).length >= 3, 'the backup holds them: a live note, a notes.json, summaries');
    const preview = await s.core.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], purge_backups: true });
    assert.equal(preview.backups.length, 1);
    assert.match(preview.backups_note, /with confirm they are rewritten/);
    assert.ok((await holding()).length >= 3, 'a dry run changes nothing');

    const done = await s.core.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], purge_backups: true, confirm: true });
    assert.deepEqual(done.backups, []);
    assert.ok(Array.isArray(done.backups_purged) && done.backups_purged.length === 1);
    const [purged] = done.backups_purged;
    assert.ok(purged?.removed.includes(`live/${s.liveWord}`));
    assert.ok(purged?.removed.some((path) => path.startsWith('_summaries/')));
    assert.ok(purged?.rewritten.includes(`history/${s.consolidated}/notes.json`));
    assert.deepEqual(await holding(), [], 'no backup file holds the notes');

    const restored = await s.core.backups.restore(owner, { backup_id: purged?.backup_id as string, as: 'copy', confirm: true });
    assert.equal(restored.status, 'ok', 'every checksum verifies');
    const copy = await s.core.history.read(owner, { space_id: 'copy', consolidation_id: s.consolidated });
    assert.deepEqual(
      copy.notes.map((note) => note.filename),
      [s.consolidatedOther],
    );
    assert.deepEqual(copy.consolidation.notes, [s.consolidatedOther]);
    assert.deepEqual((await s.core.recall.search(owner, { space_id: 'copy', query: WORD })).results, []);
    assert.ok((await s.core.recall.search(owner, { space_id: 'copy', query: 'giraffe' })).results.length > 0);
  });

  it('a summaries run under way when notes are forgotten stops, and takes back a summary that landed after the forget', async () => {
    const s = await setup();
    let forgot = false;
    // The run's first summary is checked against forgets, then its PUT is slow: a whole forget by another process lands before it.
    const slow: StorageDriver = Object.create(s.storage, {
      put: {
        value: async (key: string, ...rest: unknown[]) => {
          if (key.includes('/_summaries/L1/') && !forgot) {
            forgot = true;
            await s.core.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], confirm: true });
          }
          return (s.storage.put as (...args: unknown[]) => Promise<unknown>)(key, ...rest);
        },
      },
    });
    const running = s.make({ storage: slow });
    const result = await running.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.notEqual(result.status, 'ok');
    assert.match(String(result.message), /forgotten during this summaries run/, JSON.stringify(result));
    assert.ok(forgot, 'the forget ran mid-run');
    assert.deepEqual(await storedSummaries(s.storage, 'proj'), [], 'the summary that landed after the forget was taken back');
    assert.deepEqual(await keysHolding(s.storage, WORD), []);
    // The next run summarises without them.
    await s.core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    await assertCoverage(s.storage, 'proj', [s.consolidatedOther, s.liveOther, ...s.more]);
    assert.deepEqual(await keysHolding(s.storage, WORD), []);
  });

  it('needs admin: a writer is refused, nothing changed', async () => {
    const s = await setup();
    const writer = { ...ownerCaller('w'), permissions: new Set(['read', 'write'] as const) };
    const before = await storeState(s.storage);
    await assert.rejects(s.core.forget.forget(writer, { space_id: 'proj', refs: [s.liveWord], confirm: true }), (e: unknown) => isLiveMemError(e, 'forbidden'));
    await assert.rejects(s.core.forget.forget(writer, { space_id: 'proj', refs: [s.liveWord] }), (e: unknown) => isLiveMemError(e, 'forbidden'));
    assert.deepEqual(await storeState(s.storage), before);
  });

  for (const point of [
    'before-commit',
    'after-commit',
    'after-derived-delete',
    'after-history',
    'after-history-rewrite',
    'after-live-delete',
    'after-backup-purge',
  ]) {
    it(`cut short ${point}: all findable, or all gone once the next lease holder finishes it`, async () => {
      const s = await setup();
      await s.core.summaries.update(owner, { space_id: 'proj', ...SMALL });
      await s.core.recall.rebuildIndex('proj');
      await s.core.backups.create(owner, { space_id: 'proj' });
      const crashing = s.make({
        fault: async (at) => {
          if (at === point) throw new Error(`killed at ${at}`);
        },
      });
      await assert.rejects(
        crashing.forget.forget(owner, { space_id: 'proj', refs: [s.consolidatedWord, s.liveWord], confirm: true, purge_backups: true }),
        /killed at/,
      );
      const pending = await s.storage.get('proj/_consolidation/pending.json');
      assert.equal(pending !== null, point !== 'before-commit');
      if (pending) assert.equal(checkPending(pending.body, 'proj', commitKinds()).state, 'valid');
      // Readers already see it gone once the forget's entry is in history (before the files are rewritten).
      if (!['before-commit', 'after-commit', 'after-derived-delete'].includes(point)) assert.deepEqual(await findable(s.make(), WORD, s.consolidated), []);
      // The next holder of the lease (a backup, a consolidation, a correction, another forget) rolls it forward.
      const lock = await lockSpace(s.make().context, 'proj', owner, 'test');
      await lock.release();
      assert.equal(await s.storage.get('proj/_consolidation/pending.json'), null);
      if (point === 'before-commit') {
        assert.ok((await keysHolding(s.storage, WORD)).length > 0);
        assert.ok((await findable(s.make(), WORD, s.consolidated)).length >= 5, 'everything still findable');
      } else {
        assert.deepEqual(await keysHolding(s.storage, WORD), []);
        assert.deepEqual(await findable(s.make(), WORD, s.consolidated), []);
        for (const key of await listKeys(s.storage, '_backups/')) assert.ok(!(await s.storage.get(key))?.body.includes(WORD), `${key} purged`);
        const [backup] = (await s.core.backups.list(owner, { space_id: 'proj' })).backups;
        assert.equal((await s.core.backups.restore(owner, { backup_id: backup?.backup_id as string, as: 'copy', confirm: true })).status, 'ok');
        assert.equal((await s.core.history.list(owner, { space_id: 'proj' })).consolidations.filter((c) => c.kind === 'forget').length, 1);
      }
    });
  }

  it('a pending forget record that does not check out is refused (quarantined), never applied', () => {
    const base = {
      id: '20260301T100000-00abcdef-forget',
      space_id: 'proj',
      kind: 'forget',
      committed_at: '2026-03-01T10:00:00Z',
      notes: [],
      time_range: { oldest: null, newest: null },
      writes: [],
      metrics: {},
    };
    const good = { ...base, forget: { by: 'x', reason: null, notes: [{ filename: '20260301T100000_x_observation_1a2b3c4d.md', consolidation_id: null }] } };
    assert.equal(checkPending(Buffer.from(JSON.stringify(good)), 'proj', commitKinds()).state, 'valid');
    for (const bad of [
      { ...base },
      { ...good, id: '20260301T100000-00abcdef' },
      { ...good, forget: { ...good.forget, notes: [] } },
      { ...good, forget: { ...good.forget, notes: [{ filename: '../x.md', consolidation_id: null }] } },
      { ...good, forget: { ...good.forget, notes: [{ filename: '20260301T100000_x_observation_1a2b3c4d.md', consolidation_id: '../..' }] } },
      { ...good, writes: [{ filename: 'a.md', content: 'x', expectedEtag: null, kind: 'created' }] },
      { ...base, kind: 'consolidation', synthesis: { content: '', expectedEtag: null }, forget: good.forget },
    ]) {
      assert.equal(checkPending(Buffer.from(JSON.stringify(bad)), 'proj', commitKinds()).state, 'invalid', JSON.stringify(bad).slice(0, 200));
    }
  });
});
