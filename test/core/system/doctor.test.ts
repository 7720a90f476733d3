import assert from 'node:assert/strict';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { scenarios } from '../../../fixtures/llm/scenarios.js';
import type { Caller } from '../../../src/core/caller.js';
import { createCore, type Core } from '../../../src/core/core.js';
import type { Finding } from '../../../src/core/system/doctor-space.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';
import { makeS3Harness, requireS3OrSkip } from '../../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { fillDisk, onTinyDisk } from '../../helpers/tiny-disk.js';
import { tempDir } from '../../helpers/tmp.js';

const reader: Caller = { agent: 'reader', permissions: new Set(['read']), spaces: '*', canChooseAgent: false };
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 3600_000);

/**
 * The store's problems: the warning of a missing model (most of these cores have none) is tested on its
 * own, and the runtime check judges the Node.js running the test (test/e2e/runtime.test.ts says what it should).
 */
const problems = (findings: Finding[]) => findings.filter((finding) => finding.status !== 'ok' && finding.check !== 'llm' && finding.check !== 'runtime');
const of = (findings: Finding[], check: string) => findings.filter((finding) => finding.check === check);

describe('doctor', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let storage: StorageDriver;
  let llm: ScriptedLlm;
  let core: Core;

  before(async () => {
    llm = await startScriptedLlm(scenarios.validPlan);
  });
  after(async () => llm.close());
  beforeEach(async () => {
    home = await tempDir();
    storage = createFsDriver(home.dir);
    core = createCore({ storage, llm: llm.client(), consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 6; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
  });
  afterEach(async () => home.remove());

  it('finds a healthy store healthy: every check ok, the model asked without spending tokens', async () => {
    const listings = llm.modelListings;
    const requests = llm.requests.length;
    const result = await core.doctor(reader, {});
    assert.equal(result.status, 'ok');
    assert.deepEqual(problems(result.findings), []);
    assert.deepEqual(
      result.findings.map((finding) => finding.check),
      [
        'store',
        'conditional-writes',
        'tokens',
        'debris',
        'pending-commit',
        'leases',
        'consolidation-claim',
        'index',
        'history',
        'orphans',
        'meta',
        'layout',
        'history-files',
        'notes',
        'line-endings',
        'bank-file-size',
        'spend-holds',
        'backups',
        'anchors',
        'runtime',
        'llm',
        'embeddings',
      ],
    );
    assert.match(of(result.findings, 'llm')[0]?.message ?? '', /answers/);
    assert.equal(llm.modelListings, listings + 1);
    assert.equal(llm.requests.length, requests, 'no chat request');
    const runtimeWarns = of(result.findings, 'runtime')[0]?.status === 'warn' ? 1 : 0;
    assert.deepEqual(result.counts, { ok: 22 - runtimeWarns, warn: runtimeWarns, error: 0, fixed: 0, fixable: 0 });
    assert.deepEqual(await listKeys(storage, '_system/'), [], 'its probes leave nothing behind');
  });

  it('finds planted problems, --fix repairs each, and a second run is clean', async () => {
    // A consolidation killed right after its commit point leaves pending.json.
    const crashing = createCore({
      storage,
      llm: llm.client(),
      consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 },
      fault: async (point) => {
        if (point === 'after-commit') throw new Error('killed after commit');
      },
    });
    await crashing.consolidation.consolidate(owner, { space_id: 'proj' }).then(
      (result) => assert.notEqual(result.status, 'ok'),
      () => undefined,
    );
    assert.ok(await storage.stat('proj/_consolidation/pending.json'));
    // Temp and lock files of killed writers (two hours old), and one of a write in progress; the
    // driver's own spare temp file (opened ahead for the next note) is removed first, to count exactly.
    // In _summaries/, which the read-only run does not list (a listing of live/ or bank/ sweeps stale debris itself).
    await storage.close?.();
    const summaries = path.join(home.dir, 'proj', '_summaries');
    await mkdir(summaries, { recursive: true });
    for (const name of ['x.json.0a1b2c.lmtmp', 'y.json.lmlock']) {
      await writeFile(path.join(summaries, name), 'partial');
      await utimes(path.join(summaries, name), TWO_HOURS_AGO, TWO_HOURS_AGO);
    }
    await writeFile(path.join(home.dir, 'proj', '_meta.json.9f8e7d.lmtmp'), 'in progress');
    // A corrupt index snapshot, newest by name; a folder an interrupted import left without _meta.json.
    await storage.put('proj/_index/29990101T000000000Z-zzzzzz.snapshot', 'not a snapshot');
    await storage.put('ghost/_rules.md', '# Rules\n');
    await storage.put('ghost/live/20260101T000000_a_progress_00aaaaaa.md', 'half imported');

    const found = await core.doctor(reader, {});
    assert.equal(found.status, 'ok', 'warnings only: nothing is lost');
    const debris = of(found.findings, 'debris');
    const stale = debris.find((finding) => finding.status === 'warn');
    assert.match(
      stale?.message ?? '',
      /2 temp\/lock files in proj\/ left by writers that were killed \(older than an hour, or their process is gone\): proj\/_summaries\/x\.json\.0a1b2c\.lmtmp, proj\/_summaries\/y\.json\.lmlock/,
    );
    assert.equal(stale?.fixable, true);
    assert.ok(debris.some((finding) => finding.status === 'ok' && /1 temp\/lock file of writes in progress/.test(finding.message)));
    assert.match(of(found.findings, 'pending-commit')[0]?.message ?? '', /committed but its process stopped before applying it \(6 notes/);
    assert.match(of(found.findings, 'index')[0]?.message ?? '', /29990101T000000000Z-zzzzzz\.snapshot is unusable/);
    assert.match(of(found.findings, 'orphans')[0]?.message ?? '', /folder 'ghost\/' holds 2 files but no _meta\.json/);
    assert.equal(found.counts.fixable, 4);
    assert.ok(await storage.stat('proj/_consolidation/pending.json'), 'checking changes nothing');

    await assert.rejects(core.doctor(reader, { fix: true }), (error) => isLiveMemError(error, 'forbidden'), 'repairs need admin');
    const fixed = await core.doctor(owner, { fix: true });
    assert.equal(fixed.status, 'ok');
    assert.deepEqual(problems(fixed.findings), []);
    assert.deepEqual(
      fixed.findings.filter((finding) => finding.fixed).map((finding) => finding.check),
      ['debris', 'pending-commit', 'index', 'orphans'],
    );
    assert.equal(await storage.stat('proj/_consolidation/pending.json'), null, 'the commit was rolled forward');
    const info = await core.spaces.info(owner, { space_id: 'proj' });
    assert.equal(info.consolidation_count, 1);
    assert.equal(info.live.notes_count, 0);
    const folder = (await storage.debris?.('proj/')) ?? [];
    assert.deepEqual(
      folder.map((file) => file.path),
      ['proj/_meta.json.9f8e7d.lmtmp'],
      'the write in progress is left alone',
    );
    const snapshots = await core.recall.snapshots('proj');
    assert.equal(snapshots.length, 1);
    assert.ok(snapshots[0]?.header?.history.length === 1, 'the new snapshot covers the consolidation');
    assert.deepEqual(await listKeys(storage, 'ghost/'), []);

    const again = await core.doctor(reader, {});
    assert.deepEqual(problems(again.findings), []);
    assert.equal(again.counts.fixable, 0);
  });

  it('reports what it must not repair: a stale lease, a history entry cut short', async () => {
    const expired = new Date(Date.now() - 60_000).toISOString();
    await storage.put(
      'proj/_summaries/lock.json',
      JSON.stringify({ owner: 'summaries:bot@elsewhere:42', token: 't', acquired_at: expired, expires_at: expired }),
    );
    const [first] = (await listKeys(storage, 'proj/live/')).map((key) => key.slice('proj/live/'.length));
    await storage.put(
      'proj/history/20260101T000000-abcdef/notes.json',
      JSON.stringify({ format: 'live-mem-history-notes', format_version: 1, notes: [{ filename: first, content: 'x' }] }),
    );
    await storage.put(
      'proj/history/20260101T000001-ghijkl/notes.json',
      JSON.stringify({ format: 'live-mem-history-notes', format_version: 1, notes: [{ filename: '20250101T000000_a_progress_00zzzzzz.md', content: 'lost' }] }),
    );
    const result = await core.doctor(owner, { fix: true });
    const lease = of(result.findings, 'leases')[0];
    assert.equal(lease?.status, 'warn');
    assert.match(lease?.message ?? '', /summaries lease of 'proj' \(summaries by bot@elsewhere:42\) is stale: expired/);
    assert.equal(lease?.fixable, false);
    const history = of(result.findings, 'history');
    assert.deepEqual(
      history.map((finding) => finding.status),
      ['warn', 'error'],
    );
    assert.match(history[0]?.message ?? '', /all still in live\/, nothing is lost/);
    assert.match(history[1]?.message ?? '', /1 of its 1 note is no longer in live\//);
    assert.ok(history[1]?.hint);
    assert.equal(result.status, 'error', 'an error remains');
    assert.match(result.message ?? '', /1 problem/);
    assert.ok(await storage.stat('proj/_summaries/lock.json'), 'left as it was');
  });

  it('checks one space when asked, and a space the caller may not see is refused', async () => {
    await core.spaces.create(owner, { space_id: 'other' });
    await storage.put('other/_index/29990101T000000000Z-zzzzzz.snapshot', 'junk');
    const only = await core.doctor(owner, { space_id: 'proj' });
    assert.deepEqual(problems(only.findings), [], "other's snapshot is not looked at");
    const limited: Caller = { ...reader, spaces: new Set(['proj']) };
    await assert.rejects(core.doctor(limited, { space_id: 'other' }), (error) => isLiveMemError(error, 'forbidden'));
    assert.deepEqual(problems((await core.doctor(limited, {})).findings), [], 'only the spaces it may see');
  });

  it('says the model does not answer as an error, and an absent model as a warning naming the fix', async () => {
    const down = createCore({ storage, llm: { ...llm.client(), label: 'down', ping: async () => Promise.reject(new Error('connect ECONNREFUSED')) } });
    const result = await down.doctor(reader, {});
    assert.equal(result.status, 'error');
    assert.match(of(result.findings, 'llm')[0]?.message ?? '', /down does not answer: connect ECONNREFUSED/);
    const none = await createCore({ storage }).doctor(reader, {});
    const missing = of(none.findings, 'llm')[0];
    assert.match(missing?.message ?? '', /no model configured/);
    assert.equal(missing?.status, 'warn', 'without a model the bank never forms: never a pass');
    assert.match(missing?.hint ?? '', /live-mem setup model .*live-mem\.yaml.*LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL/);
    assert.equal(none.status, 'ok', 'a warning, not a broken store');
  });
});

describe('doctor: stores that break the contract', () => {
  it('says a store that ignores create-only writes is unsafe, whether its probe or the doctor catches it', async () => {
    const memory = createMemoryDriver();
    const ignoring: StorageDriver = { ...memory, put: (key, body, options) => memory.put(key, body, { ...options, ifNoneMatch: undefined }) };
    const result = await createCore({ storage: ignoring }).doctor(owner, {});
    const finding = of(result.findings, 'conditional-writes')[0];
    assert.equal(finding?.status, 'error');
    assert.match(finding?.message ?? '', /a second create-only write of one key succeeded/);
    assert.equal(result.status, 'error');
    const probed: StorageDriver = { ...memory, checkConditionalWrites: async () => 'unsupported' };
    const fromProbe = of((await createCore({ storage: probed }).doctor(owner, {})).findings, 'conditional-writes')[0];
    assert.match(fromProbe?.message ?? '', /accepts If-None-Match and ignores it/);
  });
});

describe('doctor on a full disk', () => {
  for (const freePages of [0, 1]) {
    it(`names the cause, the disk is full, and blames no conditional write (${freePages} page free)`, (t) =>
      onTinyDisk(t, async (mountPoint) => {
        const storage = createFsDriver(mountPoint);
        try {
          const core = createCore({ storage });
          await core.spaces.create(owner, { space_id: 'full' });
          await fillDisk(mountPoint, freePages);
          const result = await core.doctor(owner, {});
          assert.equal(result.status, 'error');
          assert.ok(
            // `\bS3\b`: the store's random temp folder may hold the letters (live-mem-tinyfs-pZS3ls).
            !result.findings.some((finding) => /not honoured|\bS3\b|radosgw/.test(`${finding.message} ${finding.hint ?? ''}`)),
            JSON.stringify(result.findings),
          );
          const full = problems(result.findings);
          assert.equal(full.length, 1, JSON.stringify(full));
          assert.match(full[0]?.message ?? '', /the disk is full/);
          assert.match(full[0]?.hint ?? '', /free some space on the disk that holds the store/);
        } finally {
          await storage.close?.();
        }
      }));
  }
});

describe('doctor on radosgw', () => {
  const s3 = requireS3OrSkip('doctor on radosgw');
  if (!s3) return;
  it('finds a healthy bucket healthy, then a pending commit, a damaged snapshot and an interrupted import, and repairs them', async () => {
    const harness = await makeS3Harness();
    const llm = await startScriptedLlm(scenarios.validPlan);
    try {
      const storage = harness.driver;
      const core = createCore({ storage, llm: llm.client() });
      await core.spaces.create(owner, { space_id: 'proj' });
      for (let i = 0; i < 3; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
      const healthy = await core.doctor(owner, {});
      assert.deepEqual(problems(healthy.findings), []);
      assert.match(of(healthy.findings, 'conditional-writes')[0]?.message ?? '', /honoured/);

      const crashing = createCore({
        storage,
        llm: llm.client(),
        fault: async (point) => {
          if (point === 'after-commit') throw new Error('killed after commit');
        },
      });
      await crashing.consolidation.consolidate(owner, { space_id: 'proj' }).catch(() => undefined);
      await storage.put('proj/_index/29990101T000000000Z-zzzzzz.snapshot', 'damaged');
      await storage.put('ghost/live/20260101T000000_a_progress_00aaaaaa.md', 'half imported');
      const sick = await core.doctor(owner, {});
      assert.deepEqual(
        problems(sick.findings).map((finding) => finding.check),
        ['pending-commit', 'index', 'orphans'],
      );
      const fixed = await core.doctor(owner, { fix: true });
      assert.deepEqual(problems(fixed.findings), []);
      assert.deepEqual(problems((await core.doctor(owner, {})).findings), []);
      assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).consolidation_count, 1);
    } finally {
      await llm.close();
      await harness.cleanup();
    }
  });
});
