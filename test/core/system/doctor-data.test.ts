/**
 * What the doctor finds in the files of a store (doctor-data.ts), planted by hand as a crash, a bad
 * disk or a hand would leave them: a garbage `_meta.json`, junk meta counters, a garbage history
 * record or notes.json, a garbage tokens.json, notes cut short or binary, `live/` replaced by a file,
 * a backup a killed run left without its manifest, a lease planted until 2099. And the operations
 * that used to fail on them for a whole space or store now keep going.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { scenarios } from '../../../fixtures/llm/scenarios.js';
import { createCore, type Core } from '../../../src/core/core.js';
import type { Finding } from '../../../src/core/system/doctor-space.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { acquireLease } from '../../../src/storage/lease.js';
import { listKeys } from '../../../src/storage/list.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { plantCompaction } from '../../helpers/plant-compaction.js';
import { makeS3Harness, requireS3OrSkip } from '../../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { tempDir } from '../../helpers/tmp.js';

const of = (findings: Finding[], check: string) => findings.filter((finding) => finding.check === check);
/** What the store's findings report (the runtime check judges the Node.js running the test: its own test says what it should). */
const problems = (findings: Finding[]) => findings.filter((finding) => finding.status !== 'ok' && finding.check !== 'runtime');
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 3600_000);
const PLANTED_LEASE = JSON.stringify({
  owner: 'consolidation:x@archive:1',
  token: 'planted',
  acquired_at: '2026-01-01T00:00:00Z',
  expires_at: '2099-01-01T00:00:00Z',
});

describe('doctor: what the files hold', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let storage: StorageDriver;
  let llm: ScriptedLlm;
  let core: Core;
  /** A new process on the same store: nothing cached. */
  const fresh = () => createCore({ storage, llm: llm.client(), consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 } });

  before(async () => {
    llm = await startScriptedLlm(scenarios.validPlan);
  });
  after(async () => llm.close());
  beforeEach(async () => {
    home = await tempDir();
    storage = createFsDriver(home.dir);
    core = fresh();
    for (const id of ['alpha', 'beta', 'gamma']) await core.spaces.create(owner, { space_id: id, description: `space ${id}` });
    for (let i = 0; i < 4; i++) await core.notes.write(owner, { space_id: 'alpha', category: 'progress', content: `alpha note ${i} about kiwis` });
  });
  afterEach(async () => {
    await storage.close?.();
    await home.remove();
  });

  it('a garbage _meta.json: the space is listed as broken and the others as usual; doctor says it is an error, with a hint', async () => {
    await storage.put('beta/_meta.json', '{"space_id": "beta", garbage');
    const listed = await fresh().spaces.list(owner);
    assert.equal(listed.total, 3);
    assert.deepEqual(
      listed.spaces.map((space) => [space.space_id, 'error' in space ? space.error : space.description]),
      [
        ['alpha', 'space alpha'],
        ['beta', '_meta.json is unreadable (not JSON): repair it by hand or restore a backup (`live-mem doctor` says more)'],
        ['gamma', 'space gamma'],
      ],
    );
    const result = await fresh().doctor(owner, {});
    const meta = of(result.findings, 'meta');
    assert.equal(meta.length, 1);
    assert.equal(meta[0]?.status, 'error');
    assert.equal(meta[0]?.space_id, 'beta');
    assert.match(meta[0]?.message ?? '', /beta\/_meta\.json is unreadable \(not JSON\)/);
    assert.match(meta[0]?.hint ?? '', /restore .*backup.*or repair it by hand/);
    assert.equal(meta[0]?.fixable, false, "the user's data: no automatic repair");
    assert.equal(result.status, 'error');
    const fixed = await fresh().doctor(owner, { fix: true });
    assert.equal(of(fixed.findings, 'meta')[0]?.status, 'error', 'left as it was');
    assert.equal((await storage.get('beta/_meta.json'))?.body.toString(), '{"space_id": "beta", garbage');
  });

  it('junk meta counters: reported, and --fix counts them again from history under the lease (a compaction is no consolidation)', async () => {
    await core.consolidation.consolidate(owner, { space_id: 'alpha' });
    const compaction = 'alpha/history/29990101T000000-cmp001/';
    await storage.put(
      `${compaction}preimages.json`,
      JSON.stringify({ version: 1, sections: [{ filename: 'progress.md', path: ['P'], content: '# P\n\nold\n' }] }),
    );
    await storage.put(
      `${compaction}record.json`,
      JSON.stringify({
        id: '29990101T000000-cmp001',
        space_id: 'alpha',
        kind: 'compaction',
        committed_at: '2999-01-01T00:00:00Z',
        notes: [],
        bank_files: [],
        metrics: {},
        preimages: 1,
      }),
    );
    const meta = JSON.parse((await storage.get('alpha/_meta.json'))?.body.toString() ?? '{}');
    await storage.put('alpha/_meta.json', JSON.stringify({ ...meta, consolidation_count: 'lots', total_notes_processed: -3 }));
    const found = of((await fresh().doctor(owner, {})).findings, 'meta');
    assert.equal(found[0]?.status, 'warn');
    assert.match(found[0]?.message ?? '', /consolidation_count: "lots", total_notes_processed: -3, which are no counts: they read as 0/);
    assert.equal(found[0]?.fixable, true);
    const fixed = of((await fresh().doctor(owner, { fix: true })).findings, 'meta');
    assert.equal(fixed[0]?.fixed, true);
    assert.match(fixed[0]?.message ?? '', /consolidation_count 1, total_notes_processed 4/);
    const stored = JSON.parse((await storage.get('alpha/_meta.json'))?.body.toString() ?? '{}');
    assert.equal(stored.consolidation_count, 1);
    assert.equal(stored.total_notes_processed, 4);
    assert.equal(stored.description, 'space alpha', 'the rest of the meta kept');
    assert.equal(await storage.stat('alpha/_consolidation/lock.json'), null, 'the lease released');
    assert.deepEqual(problems((await fresh().doctor(owner, {})).findings), []);
  });

  it('a garbage record.json or notes.json: doctor errors; history list and recall leave only that consolidation out', async () => {
    await core.consolidation.consolidate(owner, { space_id: 'alpha' });
    await core.notes.write(owner, { space_id: 'alpha', category: 'progress', content: 'a live kiwi' });
    const [cid] = (await fresh().history.list(owner, { space_id: 'alpha' })).consolidations.map((c) => c.consolidation_id);
    assert.ok(cid);
    await storage.put('alpha/history/20200101T000000-zzzzzz/record.json', 'not json {');
    await storage.put('alpha/history/20200101T000000-zzzzzz/notes.json', '{"format": "live-mem-history-notes", "format_version": 1, "notes": []}');
    await storage.put(`alpha/history/${cid}/notes.json`, '\u0000\u0001 binary junk');

    const result = await fresh().doctor(owner, {});
    const history = of(result.findings, 'history-files');
    assert.deepEqual(history.map((finding) => finding.status).sort(), ['error', 'error']);
    assert.ok(history.some((finding) => /20200101T000000-zzzzzz\/record\.json is not valid JSON: `history list` leaves consolidation/.test(finding.message)));
    assert.ok(history.some((finding) => new RegExp(`${cid}/notes\\.json is not valid JSON: recall leaves out the 4 notes`).test(finding.message)));

    const listed = await fresh().history.list(owner, { space_id: 'alpha' });
    assert.deepEqual(
      listed.consolidations.map((c) => c.consolidation_id),
      [cid],
      'the damaged record is skipped, the others listed',
    );
    const found = await fresh().recall.search(owner, { space_id: 'alpha', query: 'kiwi' });
    assert.ok(
      found.results.some((hit) => /a live kiwi/.test(String(hit.text))),
      'recall still answers from the rest',
    );
  });

  it("a compaction's preimages.json missing or garbage: doctor errors; a compaction counts for no consolidation when counters are counted again", async () => {
    await core.consolidation.consolidate(owner, { space_id: 'alpha' });
    const section = { filename: 'progress.md', path: ['Progress'], content: '# Progress\n\n- kiwis\n' };
    for (const id of ['20990101T000000-cmpok1', '20990102T000000-cmpbad', '20990103T000000-cmpgon'])
      await plantCompaction(storage, 'alpha', { id, committed_at: '2099-01-01T00:00:00.000Z', sections: [section] });
    await storage.put('alpha/history/20990102T000000-cmpbad/preimages.json', '{"version": 1, "sections": "none"}');
    await storage.delete('alpha/history/20990103T000000-cmpgon/preimages.json');
    const history = of((await fresh().doctor(owner, {})).findings, 'history-files');
    assert.deepEqual(history.map((finding) => finding.message).sort(), [
      'alpha/history/20990102T000000-cmpbad/preimages.json is not a v1 pre-images file: the text compaction 20990102T000000-cmpbad rewrote is kept nowhere else, and recall leaves it out',
      'alpha/history/20990103T000000-cmpgon/preimages.json is missing: the text compaction 20990103T000000-cmpgon rewrote is kept nowhere else, and recall leaves it out',
    ]);
    assert.ok(history.every((finding) => finding.status === 'error' && /restore .*preimages\.json from a backup/.test(finding.hint ?? '')));

    const meta = JSON.parse((await storage.get('alpha/_meta.json'))?.body.toString() ?? '{}');
    await storage.put('alpha/_meta.json', JSON.stringify({ ...meta, consolidation_count: 'lots' }));
    await fresh().doctor(owner, { fix: true });
    const stored = JSON.parse((await storage.get('alpha/_meta.json'))?.body.toString() ?? '{}');
    assert.equal(stored.consolidation_count, 1, 'the three compactions are not counted');
  });

  it('a garbage tokens.json is a store-level error', async () => {
    await storage.put('_system/tokens.json', 'garbage');
    const finding = of((await fresh().doctor(owner, {})).findings, 'tokens')[0];
    assert.equal(finding?.status, 'error');
    assert.match(finding?.message ?? '', /_system\/tokens\.json is unreadable .*every request with a token fails/);
    assert.ok(finding?.hint);
  });

  it('notes cut short, binary or empty, and live/ replaced by a file', async () => {
    await storage.put('alpha/live/20260101T000000_a_progress_00aaaaaa.md', '---\ntimestamp: "2026-01-01T00:00:00Z"\nagent: "a"\ncat');
    await storage.put('alpha/live/20260101T000001_a_progress_00bbbbbb.md', Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x00, 0x81]));
    await storage.put('alpha/live/20260101T000002_a_progress_00cccccc.md', '');
    await rm(path.join(home.dir, 'gamma', 'live'), { recursive: true });
    await writeFile(path.join(home.dir, 'gamma', 'live'), 'not a folder');

    const result = await fresh().doctor(owner, {});
    const notes = of(result.findings, 'notes');
    assert.equal(notes.length, 1);
    assert.equal(notes[0]?.status, 'warn');
    assert.match(notes[0]?.message ?? '', /^3 live notes of 'alpha' are not a readable note: /);
    assert.match(notes[0]?.message ?? '', /00aaaaaa\.md has no front-matter \(cut short, or not a note file\)/);
    assert.match(notes[0]?.message ?? '', /00bbbbbb\.md is not UTF-8 text/);
    assert.match(notes[0]?.message ?? '', /00cccccc\.md is empty/);
    const layout = of(result.findings, 'layout');
    assert.equal(layout.length, 1);
    assert.equal(layout[0]?.status, 'error');
    assert.match(layout[0]?.message ?? '', /^gamma\/live is a file, not a folder/);
  });

  it('a backup a killed run left: an old one is warned and --fix deletes it; a young one and finished backups are left alone', async () => {
    const finished = await core.backups.create(owner, { space_id: 'alpha' });
    const old = path.join(home.dir, '_backups', 'alpha', '2026-01-01T00-00-00-killed', 'files', 'live');
    await mkdir(old, { recursive: true });
    for (let i = 0; i < 5; i++) {
      await writeFile(path.join(old, `n${i}.md`), 'x');
      await utimes(path.join(old, `n${i}.md`), TWO_HOURS_AGO, TWO_HOURS_AGO);
    }
    await storage.put('_backups/alpha/2026-01-02T00-00-00-young/files/_meta.json', '{}');

    const found = of((await fresh().doctor(owner, {})).findings, 'backups');
    assert.deepEqual(
      found.map((finding) => finding.status),
      ['warn', 'ok'],
    );
    assert.match(found[0]?.message ?? '', /_backups\/alpha\/2026-01-01T00-00-00-killed\/ holds 5 files of a backup that never finished/);
    assert.match(found[1]?.message ?? '', /2026-01-02T00-00-00-young is being written .*left alone/);
    const fixed = of((await fresh().doctor(owner, { fix: true })).findings, 'backups');
    assert.equal(fixed[0]?.fixed, true);
    assert.deepEqual(await listKeys(storage, '_backups/alpha/2026-01-01T00-00-00-killed/'), []);
    assert.deepEqual(await listKeys(storage, '_backups/alpha/2026-01-02T00-00-00-young/'), ['_backups/alpha/2026-01-02T00-00-00-young/files/_meta.json']);
    const stamps = await readdir(path.join(home.dir, '_backups', 'alpha'));
    assert.ok(stamps.includes(finished.backup_id.split('/')[1] as string), 'the finished backup is kept');
    assert.equal((await core.backups.list(owner, { space_id: 'alpha' })).backups.length, 1);
  });

  it('a lease planted until 2099: doctor says so as an error, runs take it over, --fix removes it', async () => {
    await storage.put('alpha/_consolidation/lock.json', PLANTED_LEASE);
    await storage.put('beta/_summaries/lock.json', PLANTED_LEASE);
    const result = await fresh().doctor(owner, {});
    const leases = of(result.findings, 'leases');
    assert.deepEqual(
      leases.map((finding) => [finding.space_id, finding.status, finding.fixable]),
      [
        ['alpha', 'error', true],
        ['beta', 'error', true],
      ],
    );
    assert.match(leases[0]?.message ?? '', /consolidation lease of 'alpha' claims to be held until 2099-01-01T00:00:00Z, far longer than any run holds one/);
    assert.equal(result.status, 'error');

    // A run takes it over rather than waiting until 2099.
    const backup = await fresh().backups.create(owner, { space_id: 'alpha' });
    assert.equal(backup.status, 'created');
    await storage.put('alpha/_consolidation/lock.json', PLANTED_LEASE);
    const fixed = await fresh().doctor(owner, { fix: true });
    assert.deepEqual(
      of(fixed.findings, 'leases').map((finding) => [finding.status, finding.fixed]),
      [
        ['ok', true],
        ['ok', true],
      ],
    );
    assert.equal(await storage.stat('alpha/_consolidation/lock.json'), null);
    assert.equal(await storage.stat('beta/_summaries/lock.json'), null);
    assert.deepEqual(problems((await fresh().doctor(owner, {})).findings), []);
  });
});

describe('acquireLease and implausible leases', () => {
  it('takes over a lease that runs out days ahead, and still waits for one that runs out within the bound', async () => {
    const home = await tempDir();
    const storage = createFsDriver(home.dir);
    try {
      await storage.put('s/lock.json', PLANTED_LEASE);
      const taken = await acquireLease(storage, 's/lock.json', { owner: 'me', ttlMs: 60_000 });
      assert.equal(JSON.parse((await storage.get('s/lock.json'))?.body.toString() ?? '{}').owner, 'me');
      await taken.release();
      const soon = new Date(Date.now() + 3600_000).toISOString();
      await storage.put('s/lock.json', JSON.stringify({ owner: 'other', token: 't', acquired_at: soon, expires_at: soon }));
      await assert.rejects(acquireLease(storage, 's/lock.json', { owner: 'me', ttlMs: 60_000 }), /held by other/);
    } finally {
      await storage.close?.();
      await home.remove();
    }
  });
});

describe('doctor on radosgw: a backup a killed run left', () => {
  const s3 = requireS3OrSkip('doctor backups on radosgw');
  if (!s3) return;
  it('leaves a young unfinished backup alone, warns of an old one, and --fix deletes its objects', async () => {
    const harness = await makeS3Harness();
    try {
      const storage = harness.driver;
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: 'proj' });
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'one' });
      await core.backups.create(owner, { space_id: 'proj' });
      for (let i = 0; i < 34; i++) await storage.put(`_backups/proj/2026-01-01T00-00-00-killed/files/live/n${i}.md`, 'x');
      const young = of((await core.doctor(owner, {})).findings, 'backups');
      assert.deepEqual(
        young.map((finding) => finding.status),
        ['ok'],
        'just written: may be a backup in progress',
      );
      // Two hours later (radosgw's times cannot be set back: the clock moves instead).
      const later = createCore({ storage, clock: () => new Date(Date.now() + 2 * 3600_000) });
      const found = of((await later.doctor(owner, {})).findings, 'backups');
      assert.equal(found[0]?.status, 'warn');
      assert.match(found[0]?.message ?? '', /holds 34 files of a backup that never finished/);
      const fixed = of((await later.doctor(owner, { fix: true })).findings, 'backups');
      assert.equal(fixed[0]?.fixed, true);
      assert.deepEqual(await listKeys(storage, '_backups/proj/2026-01-01T00-00-00-killed/'), []);
      assert.equal((await core.backups.list(owner, { space_id: 'proj' })).backups.length, 1, 'the finished backup is kept');
    } finally {
      await harness.cleanup();
    }
  });
});
