/**
 * A stored pending record is input: applied only to the space whose folder holds it and only once
 * it checks out; one that does not is quarantined (nothing of it applied, its notes left in live/),
 * reported by doctor, and never wedges the space.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { scenarios } from '../../../fixtures/llm/scenarios.js';
import { commitKinds, createCore, type Core } from '../../../src/core/core.js';
import { checkPending } from '../../../src/core/commit/pending.js';
import type { Finding } from '../../../src/core/system/doctor-space.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { historyNoteNames, owner } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { tempDir } from '../../helpers/tmp.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function makeCore(storage: StorageDriver): Promise<Core> {
  const server = await startScriptedLlm(scenarios.validPlan);
  servers.push(server);
  return createCore({ storage, llm: server.client(), consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 } });
}

async function space(core: Core, spaceId: string, notes: number): Promise<void> {
  await core.spaces.create(owner, { space_id: spaceId });
  for (let i = 0; i < notes; i++) await core.notes.write(owner, { space_id: spaceId, category: 'progress', content: `${spaceId} note ${i}` });
}

/** Every file of a space, byte for byte. */
async function snapshot(storage: StorageDriver, spaceId: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const key of await listKeys(storage, `${spaceId}/`)) files.set(key, (await storage.get(key))?.body.toString('base64') ?? '');
  return files;
}

const liveNames = async (storage: StorageDriver, spaceId: string) =>
  (await listKeys(storage, `${spaceId}/live/`)).map((key) => key.slice(`${spaceId}/live/`.length)).filter((name) => name.endsWith('.md'));

/** A record as the consolidation writes it (commit.ts). */
const record = (spaceId: string, notes: string[], filename = 'evil.md') => ({
  id: '20260220T180000-abc123',
  space_id: spaceId,
  committed_at: '2026-02-20T18:00:00.000Z',
  notes,
  time_range: { oldest: null, newest: null },
  writes: [{ filename, content: '# Evil\n\nWritten by a planted record.\n', expectedEtag: null, kind: 'created' }],
  synthesis: { content: 'A planted synthesis.', expectedEtag: null },
  metrics: {},
});

const quarantined = (storage: StorageDriver, spaceId: string) => listKeys(storage, `${spaceId}/_consolidation/quarantine/`);
const pendingFindings = (findings: Finding[]) => findings.filter((finding) => finding.check === 'pending-commit');

describe('a pending record is applied only to its own space, once it checks out', () => {
  it("a record in space a naming space b leaves b byte for b byte and a's notes in place; it is quarantined", async () => {
    const storage = createMemoryDriver();
    const core = await makeCore(storage);
    await space(core, 'a', 3);
    await space(core, 'b', 3);
    await core.consolidation.consolidate(owner, { space_id: 'b' });
    await core.notes.write(owner, { space_id: 'b', category: 'todo', content: 'b after its consolidation' });
    const before = await snapshot(storage, 'b');
    const aNotes = await liveNames(storage, 'a');
    const planted = JSON.stringify(record('b', await liveNames(storage, 'b')));
    await storage.put('a/_consolidation/pending.json', planted);

    // A backup of a (like an export, a consolidation or doctor --fix) takes the lease, which recovers first.
    const backup = await core.backups.create(owner, { space_id: 'a' });
    assert.equal(backup.status, 'created');
    assert.match(
      backup.warnings?.join('\n') ?? '',
      /record of 'a' \(20260220T180000-abc123\) was refused \(it names space "b", but it is stored in 'a'\) and moved to a\/_consolidation\/quarantine\//,
    );

    assert.deepEqual(await snapshot(storage, 'b'), before, 'b is untouched');
    assert.deepEqual(await liveNames(storage, 'a'), aNotes, "a's notes are still in live/");
    assert.equal(await storage.get('a/bank/evil.md'), null);
    assert.equal(await storage.get('a/_consolidation/pending.json'), null);
    const [kept] = await quarantined(storage, 'a');
    assert.equal((await storage.get(kept!))?.body.toString(), planted, 'kept byte for byte');
    assert.equal((await core.spaces.info(owner, { space_id: 'a' })).consolidation_count, 0);

    // An export, a read, takes the same way: the record is quarantined, b is left alone.
    await storage.put('a/_consolidation/pending.json', JSON.stringify({ ...record('b', []), id: '20260220T180001-def456' }));
    const exported = await core.backups.exportStream(owner, 'a');
    for await (const _chunk of exported.stream) {
      // drained
    }
    assert.deepEqual(await snapshot(storage, 'b'), before, 'b is untouched');
    assert.equal(await storage.get('a/_consolidation/pending.json'), null);
    assert.equal((await quarantined(storage, 'a')).length, 2);
  });

  it('a record committed with a name no file system holds is quarantined; doctor says so; --fix does it; the space is usable again', async () => {
    const home = await tempDir();
    try {
      const storage = createFsDriver(home.dir);
      const core = await makeCore(storage);
      await space(core, 'proj', 4);
      const notes = await liveNames(storage, 'proj');
      // What a consolidation committed before names were checked in bytes: 255 characters, ENAMETOOLONG on its temp name.
      await storage.put('proj/_consolidation/pending.json', JSON.stringify(record('proj', notes, `${'a'.repeat(252)}.md`)));

      const found = await core.doctor(owner, { space_id: 'proj' });
      const [finding] = pendingFindings(found.findings);
      assert.equal(finding?.status, 'error');
      assert.equal(finding?.fixable, true);
      assert.match(
        finding?.message ?? '',
        /proj\/_consolidation\/pending\.json \(consolidation 20260220T180000-abc123\) cannot be applied: invalid bank filename .*255 bytes/,
      );
      assert.ok(await storage.stat('proj/_consolidation/pending.json'), 'checking changes nothing');

      const fixed = await core.doctor(owner, { space_id: 'proj', fix: true });
      const [repair] = pendingFindings(fixed.findings);
      assert.equal(repair?.fixed, true);
      assert.match(repair?.message ?? '', /quarantined proj\/_consolidation\/pending\.json of 'proj'/);
      assert.equal(await storage.stat('proj/_consolidation/pending.json'), null);
      assert.deepEqual(await liveNames(storage, 'proj'), notes, 'nothing of it applied, the notes in live/');

      const after = await core.doctor(owner, { space_id: 'proj' });
      const [report] = pendingFindings(after.findings);
      assert.equal(report?.status, 'warn');
      assert.match(
        report?.message ?? '',
        /record of 'proj' \(20260220T180000-abc123\) was refused \(invalid bank filename .*\) and quarantined at proj\/_consolidation\/quarantine\/20260220T180000-abc123-[0-9a-f]{16}\.json/,
      );

      const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'ok', result.message);
      assert.equal(result.notes_processed, 4);
      assert.equal((await historyNoteNames(storage, 'proj')).length, 4);
      await storage.close?.();
    } finally {
      await home.remove();
    }
  });

  it('a consolidation quarantines a record that is not JSON itself, says so, and goes on', async () => {
    const storage = createMemoryDriver();
    const core = await makeCore(storage);
    await space(core, 'proj', 2);
    await storage.put('proj/_consolidation/pending.json', '{"id": "20260220T180000-abc123", "notes": [');
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.recovered, undefined);
    assert.match(result.warnings?.join('\n') ?? '', /record of 'proj' was refused \(it is not JSON\) and moved to proj\/_consolidation\/quarantine\/record-/);
    assert.equal(result.notes_processed, 2);
    assert.equal((await quarantined(storage, 'proj')).length, 1);
  });

  for (const [what, mutate, pattern] of [
    ['a note name that is a path', (r: ReturnType<typeof record>) => r.notes.push('../../b/live/x.md'), /no note file name/],
    ['an id that is a path', (r: ReturnType<typeof record>) => (r.id = '../../b/history/x'), /no consolidation id/],
    ['an etag that is no string', (r: ReturnType<typeof record>) => ((r.writes[0] as { expectedEtag: unknown }).expectedEtag = 42), /malformed/],
  ] as const) {
    it(`refuses a record with ${what} before writing anything`, async () => {
      const storage = createMemoryDriver();
      const core = await makeCore(storage);
      await space(core, 'proj', 2);
      const planted = record('proj', await liveNames(storage, 'proj'));
      mutate(planted);
      await storage.put('proj/_consolidation/pending.json', JSON.stringify(planted));
      const before = await snapshot(storage, 'proj');
      const backup = await core.backups.create(owner, { space_id: 'proj' });
      assert.match(backup.warnings?.join('\n') ?? '', pattern);
      const after = await snapshot(storage, 'proj');
      const moved = [...after.keys()].filter((key) => !before.has(key));
      assert.equal(moved.length, 1);
      assert.match(moved[0] ?? '', /^proj\/_consolidation\/quarantine\//);
      for (const [key, body] of before) if (key !== 'proj/_consolidation/pending.json') assert.equal(after.get(key), body, key);
    });
  }

  it('a valid record of its own space is still finished (not quarantined)', async () => {
    const storage = createMemoryDriver();
    const core = await makeCore(storage);
    await space(core, 'proj', 2);
    const notes = await liveNames(storage, 'proj');
    await storage.put('proj/_consolidation/pending.json', JSON.stringify(record('proj', notes, 'fine.md')));
    const backup = await core.backups.create(owner, { space_id: 'proj' });
    assert.equal(backup.warnings, undefined);
    assert.match((await storage.get('proj/bank/fine.md'))?.body.toString() ?? '', /planted record/);
    assert.deepEqual(await liveNames(storage, 'proj'), []);
  });

  describe('a compaction record', () => {
    const compaction = () => ({
      id: '20260220T180000-cmp123',
      space_id: 'proj',
      kind: 'compaction',
      committed_at: '2026-02-20T18:00:00.000Z',
      notes: [] as string[],
      time_range: { oldest: null, newest: null },
      writes: [{ filename: 'progress.md', content: '# Progress\n\ndigest\n', expectedEtag: 'e1', kind: 'updated' }],
      metrics: {},
      preimages: [{ filename: 'progress.md', path: ['Progress', 'Old'], content: '## Old\n\nthe old text\n' }] as unknown[],
    });
    const check = (raw: object) => checkPending(Buffer.from(JSON.stringify(raw)), 'proj', commitKinds());

    it('is valid with its pre-images, no notes and no synthesis', () => {
      assert.equal(check(compaction()).state, 'valid');
    });

    for (const [what, mutate, pattern] of [
      ['an unknown kind', (r: Record<string, unknown>) => (r.kind = 'purge'), /kind "purge"/],
      ['notes', (r: Record<string, unknown>) => (r.notes = ['20260220T170000_a_progress_abcdef12.md']), /compaction, but it names notes/],
      ['a synthesis', (r: Record<string, unknown>) => (r.synthesis = { content: 's', expectedEtag: null }), /writes the synthesis/],
      ['no pre-images', (r: Record<string, unknown>) => delete r.preimages, /preimages are not a list/],
      [
        'a pre-image of a file it does not write',
        (r: Record<string, unknown>) => ((r.preimages as unknown[])[0] = { filename: 'other.md', path: [], content: '' }),
        /preimages is malformed/,
      ],
      [
        'a pre-image path that is no list of strings',
        (r: Record<string, unknown>) => ((r.preimages as unknown[])[0] = { filename: 'progress.md', path: [1], content: '' }),
        /preimages is malformed/,
      ],
      ['an id that is a path', (r: Record<string, unknown>) => (r.id = '../x'), /no consolidation id/],
    ] as const) {
      it(`is refused with ${what}`, () => {
        const raw: Record<string, unknown> = compaction();
        mutate(raw);
        const state = check(raw);
        assert.equal(state.state, 'invalid');
        assert.match(state.state === 'invalid' ? state.problem : '', pattern);
      });
    }

    it('pre-images in a consolidation record are refused', () => {
      const raw = { ...record('proj', []), preimages: [] };
      const state = check(raw);
      assert.match(state.state === 'invalid' ? state.problem : '', /only a compaction has/);
    });
  });
});
