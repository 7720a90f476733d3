/**
 * `live-mem doctor` end to end, on the built binary: a healthy store, then the problems real
 * accidents leave (a consolidation killed with SIGKILL after its commit point, temp and lock files
 * of killed writers, a damaged index snapshot, an interrupted import), found, repaired by --fix,
 * and found clean again.
 */
import assert from 'node:assert/strict';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { runtimeState } from '../../src/shared/runtime.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { fillDisk, onTinyDisk } from '../helpers/tiny-disk.js';
import { tempDir } from '../helpers/tmp.js';

interface Finding {
  check: string;
  status: string;
  message: string;
  fixed?: boolean;
}

describe('live-mem doctor', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let llm: ScriptedLlm;
  // With a model: a store without one is not healthy (doctor warns that the bank cannot form; no-model.test.ts).
  const cli = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn', ...llm.env(), ...env },
      extendEnv: false,
      reject: false,
    });
  const doctor = async (args: string[] = []) => {
    const run = await cli(['doctor', ...args, '--json']);
    const body = JSON.parse(run.stdout) as { status: string; findings: Finding[]; counts: Record<string, number> };
    // The store's problems: the runtime check judges the Node.js running the test (its own test below).
    return { ...run, body, problems: body.findings.filter((finding) => finding.status !== 'ok' && finding.check !== 'runtime') };
  };

  before(async () => {
    home = await tempDir();
    llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    const core = createCore({ storage: createFsDriver(home.dir) });
    const owner = ownerCaller('tester');
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 5; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note ${i}` });
  });
  after(async () => {
    await llm?.close();
    await home?.remove();
  });

  it('finds a healthy store healthy', async () => {
    const healthy = await doctor();
    assert.equal(healthy.exitCode, 0, healthy.stderr);
    assert.equal(healthy.body.status, 'ok');
    assert.deepEqual(healthy.problems, []);
  });

  it('finds what accidents leave, --fix repairs it, and the next run is clean', async () => {
    const llmEnv = { LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' };
    const killed = await cli(['consolidate', 'proj'], { ...llmEnv, LIVE_MEM_TEST_KILL_AT: 'after-commit' });
    assert.equal(killed.signal, 'SIGKILL');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    // _summaries/: the read-only run lists live/ and bank/, and a listing sweeps stale debris itself.
    await mkdir(path.join(home.dir, 'proj', '_summaries'), { recursive: true });
    for (const name of ['a.json.123abc.lmtmp', 'b.json.lmlock']) {
      const file = path.join(home.dir, 'proj', '_summaries', name);
      await writeFile(file, 'partial');
      await utimes(file, twoHoursAgo, twoHoursAgo);
    }
    const storage = createFsDriver(home.dir);
    await storage.put('proj/_index/29990101T000000000Z-zzzzzz.snapshot', 'damaged');
    await storage.put('halfway/live/20260101T000000_a_progress_00aaaaaa.md', 'an import cut short');

    const sick = await doctor();
    assert.equal(sick.exitCode, 0, 'warnings only');
    assert.deepEqual(sick.problems.map((finding) => finding.check).sort(), ['debris', 'index', 'leases', 'orphans', 'pending-commit']);
    const text = await cli(['doctor']);
    assert.match(text.stdout, /^! pending-commit: consolidation \S+ of 'proj' was committed but its process stopped/m);
    assert.match(text.stdout, /^ {4}→ --fix finishes it now, under the space lease; /m);
    assert.match(text.stdout, /`live-mem doctor --fix` repairs 4$/m);

    const fixed = await doctor(['--fix']);
    assert.equal(fixed.exitCode, 0, fixed.stderr);
    assert.deepEqual(fixed.problems, []);
    assert.deepEqual(
      fixed.body.findings.filter((finding) => finding.fixed).map((finding) => finding.check),
      ['debris', 'pending-commit', 'index', 'orphans'],
    );
    const info = JSON.parse((await cli(['space', 'info', 'proj', '--json'])).stdout);
    assert.equal(info.total_notes_processed, 5, 'the killed consolidation was finished, every note once');

    const clean = await cli(['doctor']);
    assert.equal(clean.exitCode, 0);
    const runtimeOk = runtimeState(process.versions.node, new Date().toISOString().slice(0, 10)).pastEndOfLife === undefined;
    assert.ok(
      clean.stdout
        .trim()
        .split('\n\n')[0]
        ?.split('\n')
        .every((line) => line.startsWith('✓ ') || (!runtimeOk && /^(! runtime: | {4}→ )/.test(line))),
      clean.stdout,
    );
    assert.match(clean.stdout, new RegExp(`: ${runtimeOk ? 22 : 21} ok, ${runtimeOk ? 0 : 1} warning\\(s\\), 0 error\\(s\\)$`, 'm'));
  });

  it('on a full disk, says the disk is full rather than blaming conditional writes', (t) =>
    onTinyDisk(t, async (mountPoint) => {
      const storage = createFsDriver(mountPoint);
      await createCore({ storage }).spaces.create(ownerCaller('tester'), { space_id: 'full' });
      await storage.close?.();
      await fillDisk(mountPoint, 1);
      const run = await cli(['doctor'], { LIVE_MEM_HOME: mountPoint });
      assert.equal(run.exitCode, 1);
      assert.match(run.stdout, /^✗ (store|conditional-writes): .*the disk is full/m); // which probe hits the full disk first depends on the page left
      assert.match(run.stdout, /^ {4}→ free some space on the disk that holds the store/m);
      assert.doesNotMatch(run.stdout, /not honoured|\bS3\b|radosgw/);
    }));

  it('exits 1 while an error remains (a model that does not answer)', async () => {
    const down = await cli(['doctor'], { LIVE_MEM_LLM_BASE_URL: 'http://127.0.0.1:1/v1', LIVE_MEM_LLM_MODEL: 'm' });
    assert.equal(down.exitCode, 1);
    assert.match(down.stdout, /^✗ llm: m @ http:\/\/127\.0\.0\.1:1\/v1 does not answer: /m);
    assert.equal(down.stderr, 'live-mem: 1 problem to attend to (see above)');
  });

  it('exits 1 for a model the endpoint does not list (GET /models), naming what it lists and the nearest; system_health says so too', async () => {
    const typo = await cli(['doctor'], { LIVE_MEM_LLM_MODEL: 'scripted-modle' });
    assert.equal(typo.exitCode, 1, typo.stdout);
    assert.match(
      typo.stdout,
      /^✗ llm: scripted-modle @ \S+ answers, but the endpoint does not list the model 'scripted-modle' among its 1 \(GET \/models: scripted-model\)$/m,
    );
    assert.match(typo.stdout, /^ {4}→ set LIVE_MEM_LLM_MODEL \(llm\.model in live-mem\.yaml\) to a model it lists \(did you mean 'scripted-model'\?\)$/m);
    const health = JSON.parse((await cli(['health', '--json'], { LIVE_MEM_LLM_MODEL: 'scripted-modle' })).stdout);
    assert.equal(health.services.llm.status, 'error');
    assert.match(health.services.llm.message, /does not list the model 'scripted-modle'/);
    // The name it lists passes (the other tests of this file), and so does an alias of a dated snapshot it lists: llm/listed-models.ts.
    const listed = await cli(['doctor', '--json']);
    assert.equal((JSON.parse(listed.stdout).findings as Finding[]).find((finding) => finding.check === 'llm')?.status, 'ok', listed.stdout);
  });

  it('quarantines a pending record that can never be applied (a name too long for the disk): reported, --fix, usable again', async () => {
    const core = createCore({ storage: createFsDriver(home.dir) });
    const owner = ownerCaller('tester');
    await core.spaces.create(owner, { space_id: 'wedged' });
    for (let i = 0; i < 3; i++) await core.notes.write(owner, { space_id: 'wedged', category: 'progress', content: `note ${i}` });
    const notes = (await core.notes.read(owner, { space_id: 'wedged' })).notes.map((note) => note.filename);
    // What a consolidation committed before bank names were checked in bytes: ENAMETOOLONG on its temp name, forever.
    const record = {
      id: '20260220T180000-abc123',
      space_id: 'wedged',
      committed_at: '2026-02-20T18:00:00.000Z',
      notes,
      time_range: { oldest: null, newest: null },
      writes: [{ filename: `${'é'.repeat(130)}.md`, content: '# Long\n', expectedEtag: null, kind: 'created' }],
      synthesis: { content: 'S.', expectedEtag: null },
      metrics: {},
    };
    await createFsDriver(home.dir).put('wedged/_consolidation/pending.json', JSON.stringify(record));

    const sick = await cli(['doctor', 'wedged']);
    assert.equal(sick.exitCode, 1, sick.stdout);
    assert.match(
      sick.stdout,
      /^✗ pending-commit: wedged\/_consolidation\/pending\.json \(consolidation 20260220T180000-abc123\) cannot be applied: invalid bank filename .*263 bytes/m,
    );
    const fixed = await cli(['doctor', 'wedged', '--fix']);
    assert.equal(fixed.exitCode, 0, fixed.stdout);
    assert.match(fixed.stdout, /quarantined wedged\/_consolidation\/pending\.json of 'wedged'/);
    const after = await cli(['doctor', 'wedged']);
    assert.equal(after.exitCode, 0, after.stdout);
    assert.match(
      after.stdout,
      /^! pending-commit: a pending consolidation record of 'wedged' \(20260220T180000-abc123\) was refused .* quarantined at wedged\/_consolidation\/quarantine\//m,
    );
    const llmEnv = { LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' };
    const run = await cli(['consolidate', 'wedged', '--json'], llmEnv);
    assert.equal(run.exitCode, 0, run.stdout + run.stderr);
    assert.equal(JSON.parse(run.stdout).notes_processed, 3);
  });
});
