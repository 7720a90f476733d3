/**
 * Recall across real processes: several live-mem servers write notes, consolidate and search one
 * space at once (fs and radosgw), processes are killed while they write index snapshots, and stores
 * written by others (the Python server, an import) are indexed on their first search.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { decodeSnapshot } from '../../src/core/recall/index-store.js';
import { bm25Engine } from '../../src/search/bm25.js';
import { mapLimit } from '../../src/shared/concurrency.js';
import { listKeys } from '../../src/storage/list.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, spawnServer } from '../helpers/mcp-client.js';
import { plantCompaction } from '../helpers/plant-compaction.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('checker');
const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** Keeps one note in ten in the bank: the rest lives on only in history. */
const lossy = (messages: Array<{ role: string; content: string }>) => {
  const kept = [
    ...messages
      .map((m) => m.content)
      .join('\n')
      .matchAll(/token (tok\d+x\d+)/g),
  ]
    .filter((_, i) => i % 10 === 0)
    .map((m) => `- ${m[1]}`);
  return plan([rewrite('kept.md', `# Kept\n${kept.join('\n')}\n`)], 'Synthesis.');
};

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
  });

/** Every snapshot left in the store decodes whole. */
async function assertSnapshotsWhole(storage: StorageDriver, spaceId: string): Promise<number> {
  const keys = (await listKeys(storage, `${spaceId}/_index/`)).filter((key) => key.endsWith('.snapshot'));
  for (const key of keys) decodeSnapshot((await storage.get(key))!.body, bm25Engine);
  return keys.length;
}

async function writersConsolidatorSearchers(env: Record<string, string>, storage: StorageDriver): Promise<void> {
  const llm = await startScriptedLlm([{ dynamic: lossy }]);
  servers.push(llm);
  const withLlm = { ...env, LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted', LIVE_MEM_LLM_API_KEY: 'k', LIVE_MEM_SUMMARIES: 'off' };
  const procs = await Promise.all([0, 1, 2, 3].map((p) => spawnServer({ ...withLlm, LIVE_MEM_AGENT: `proc-${p}` })));
  const [writerA, writerB, consolidator, searcher] = procs as [(typeof procs)[0], (typeof procs)[0], (typeof procs)[0], (typeof procs)[0]];
  try {
    await writerA.call('space_create', { space_id: 'shared' });
    let writing = true;
    const write = (server: typeof writerA, p: number) =>
      mapLimit(
        Array.from({ length: 80 }, (_, i) => i),
        4,
        async (i) => {
          const result = await server.call('live_note', {
            space_id: 'shared',
            category: 'observation',
            content: `Process ${p} saw token tok${p}x${i} in the logs`,
          });
          assert.equal(result.status, 'created');
        },
      );
    const writers = Promise.all([write(writerA, 0), write(writerB, 1)]).finally(() => (writing = false));
    const consolidating = (async () => {
      let committed = 0;
      while (writing) {
        const result = await consolidator.call('bank_consolidate', { space_id: 'shared' });
        assert.ok(['ok', 'conflict'].includes(result.status), JSON.stringify(result));
        committed += (result.consolidations as string[] | undefined)?.length ?? 0;
      }
      return committed;
    })();
    const searching = (async () => {
      let calls = 0;
      while (writing) {
        const result = await searcher.call('memory_search', { space_id: 'shared', query: `tok0x${calls % 80}`, limit: 3 });
        assert.equal(result.status, 'ok', JSON.stringify(result));
        calls++;
      }
      return calls;
    })();
    await writers;
    assert.ok((await consolidating) >= 1, 'consolidations ran while notes were written');
    assert.ok((await searching) >= 1, 'searches ran while notes were written');
    assert.equal((await consolidator.call('bank_consolidate', { space_id: 'shared' })).status, 'ok');
    // Every one of the 160 notes, now in history, is found by the searcher and by a new process.
    const fresh = await spawnServer({ ...withLlm, LIVE_MEM_AGENT: 'fresh' });
    procs.push(fresh);
    for (const server of [searcher, fresh]) {
      for (let p = 0; p < 2; p++) {
        for (let i = 0; i < 80; i++) {
          const result = await server.call('memory_search', { space_id: 'shared', query: `tok${p}x${i}`, limit: 1, levels: [0] });
          const hit = (result.results as Array<{ text: string; source: string }>)[0];
          assert.match(
            hit?.text ?? '',
            new RegExp(`tok${p}x${i} `),
            `tok${p}x${i} in ${server === fresh ? 'a new' : 'the searching'} process: ${JSON.stringify(result.results)}`,
          );
          assert.equal(hit?.source, 'history');
        }
      }
    }
  } finally {
    await Promise.all(procs.map((s) => s.close()));
  }
  assert.ok((await assertSnapshotsWhole(storage, 'shared')) >= 1, 'snapshots were written');
  const core = createCore({ storage });
  assert.equal((await core.notes.read(owner, { space_id: 'shared' })).total, 0, 'every note was consolidated');
}

describe('recall across processes', () => {
  it('on fs: writers, a consolidator and a searcher at once lose no entry and corrupt no snapshot', async () => {
    const home = await tempDir();
    try {
      await writersConsolidatorSearchers({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' }, createFsDriver(home.dir));
    } finally {
      await home.remove();
    }
  });

  const s3 = requireS3OrSkip('recall on S3');
  if (s3) {
    it('on S3 (radosgw): writers, a consolidator and a searcher at once lose no entry and corrupt no snapshot', async () => {
      const harness = await makeS3Harness();
      try {
        await writersConsolidatorSearchers({ ...s3ProcessEnv(s3, harness.prefix), LIVE_MEM_LOG_LEVEL: 'warn' }, harness.driver);
      } finally {
        await harness.cleanup();
      }
    });
  }

  it('survives processes killed with SIGKILL while they build and write snapshots', async () => {
    const home = await tempDir();
    try {
      const storage = createFsDriver(home.dir);
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: 'big' });
      await mapLimit(
        Array.from({ length: 1500 }, (_, i) => i),
        16,
        (i) =>
          core.notes.write(owner, { space_id: 'big', category: 'progress', content: `Entry ${i}: the kestrel${i} pipeline moved ${i * 3} rows of the ledger` }),
      );
      const env = { PATH: process.env.PATH ?? '', HOME: home.dir, LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' };
      let killed = 0;
      // A build from scratch takes about half a second here, its snapshot written at the end: the
      // kills land while reading notes, while encoding, and while the snapshot is being written.
      for (const [round, delay] of [100, 200, 300, 380, 440, 500, 560, 250].entries()) {
        if (round % 2 === 0) await storage.deleteMany(await listKeys(storage, 'big/_index/'));
        const child = spawn(process.execPath, [BIN, 'recall', 'big', 'kestrel7', '--json'], { env, stdio: 'ignore' });
        const exited = new Promise((resolve) => child.on('exit', resolve));
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (child.kill('SIGKILL')) killed++;
        await exited;
        await assertSnapshotsWhole(storage, 'big');
      }
      assert.ok(killed >= 3, `only ${killed} processes were still running when killed`);
      await assertSnapshotsWhole(storage, 'big');
      const done = await cli({ LIVE_MEM_HOME: home.dir }, ['recall', 'big', 'kestrel1234', '--json']);
      assert.equal(done.exitCode, 0, done.stderr);
      assert.match(JSON.parse(done.stdout).results[0].text, /kestrel1234 pipeline/);
      assert.ok((await assertSnapshotsWhole(storage, 'big')) >= 1, 'a whole snapshot now exists');
      const loaded = createCore({ storage });
      const sample = await mapLimit([0, 377, 999, 1499], 4, (i) => loaded.recall.search(owner, { space_id: 'big', query: `kestrel${i}`, limit: 1 }));
      sample.forEach((result, j) => assert.match(result.results[0]?.text ?? '', new RegExp(`kestrel${[0, 377, 999, 1499][j]} `)));
    } finally {
      await home.remove();
    }
  });

  it('indexes a bucket written by the Python server and an imported space on their first search', async () => {
    const home = await tempDir();
    try {
      await cp(fileURLToPath(new URL('../../fixtures/python-bucket', import.meta.url)), home.dir, { recursive: true });
      const env = { LIVE_MEM_HOME: home.dir };
      const python = await cli(env, ['recall', 'projet-alpha', 'authentification', '--levels', '0', '--json']);
      assert.equal(python.exitCode, 0, python.stderr);
      const hits = JSON.parse(python.stdout).results as Array<{ source: string; ref: string }>;
      assert.equal(hits[0]?.source, 'live');
      assert.equal(hits[0]?.ref, '20260220T180512_cline-dev_observation_a3f8b2c1.md');

      const archive = `${home.dir}/alpha.tar.gz`;
      assert.equal((await cli(env, ['export', 'projet-alpha', '-o', archive])).exitCode, 0);
      assert.equal((await cli(env, ['import', archive, '--as', 'beta'])).exitCode, 0);
      const imported = await cli(env, ['recall', 'beta', 'SQLite', '--json']);
      assert.equal(imported.exitCode, 0, imported.stderr);
      assert.match(JSON.parse(imported.stdout).results[0].text, /S3 au lieu de SQLite/);
    } finally {
      await home.remove();
    }
  });
});

describe('compaction pre-images on the binary', () => {
  const CID = '20990305T120000-cmp001';
  const DONE = '## Done\n\n- 2026-02-10 the albatross migrations finished\n- 2026-02-12 the pelican importer shipped\n';

  /** One consolidation, 60 live notes (enough for a first snapshot), and a compaction of progress.md's Done section, planted. */
  async function compactedSpace(dir: string) {
    const llm = await startScriptedLlm([{ reply: plan([rewrite('progress.md', `# Progress\n\n${DONE}\n## Next\n\n- the heron exporter\n`)]) }]);
    servers.push(llm);
    const storage = createFsDriver(dir);
    const core = createCore({ storage, llm: llm.client() });
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'work of the week' });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    for (let i = 0; i < 60; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Routine entry ${i} of the build` });
    await plantCompaction(storage, 'proj', {
      id: CID,
      committed_at: '2099-03-05T12:00:00.000Z',
      sections: [{ filename: 'progress.md', path: ['Progress', 'Done'], content: DONE }],
      bank: { 'progress.md': '# Progress\n\n## Done\n\n- February: migrations finished (digest)\n\n## Next\n\n- the heron exporter\n' },
    });
    return storage;
  }

  it('over MCP: memory_search finds a pre-image as bank_history; history_list and history_read show the compaction', async () => {
    const home = await tempDir();
    try {
      await compactedSpace(home.dir);
      const server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'warn' });
      try {
        const found = await server.call('memory_search', { space_id: 'proj', query: 'pelican importer', limit: 3 });
        const hit = (found.results as Array<Record<string, unknown>>)[0];
        assert.equal(hit?.source, 'bank_history', JSON.stringify(found));
        assert.equal(hit.ref, 'progress.md#Progress > Done');
        assert.deepEqual(
          [hit.filename, hit.path, hit.compaction_id, hit.superseded_at],
          ['progress.md', ['Progress', 'Done'], CID, '2099-03-05T12:00:00.000Z'],
        );
        assert.match(String(hit.note), /earlier version of this bank section/);
        const both = await server.call('memory_search', { space_id: 'proj', query: 'migrations finished', sources: ['bank', 'bank_history'] });
        assert.deepEqual((both.results as Array<{ source: string }>).map((r) => r.source).sort(), ['bank', 'bank_history']);

        const listed = await server.call('history_list', { space_id: 'proj' });
        const entries = listed.consolidations as Array<Record<string, unknown>>;
        assert.deepEqual(
          entries.map((entry) => [entry.kind, entry.notes_count, entry.preimages_count]),
          [
            ['compaction', undefined, 1],
            ['consolidation', 1, undefined],
          ],
        );
        const read = await server.call('history_read', { space_id: 'proj', consolidation_id: CID });
        assert.equal(read.status, 'ok', JSON.stringify(read));
        assert.deepEqual(read.notes, []);
        assert.deepEqual(read.preimages, [{ filename: 'progress.md', path: ['Progress', 'Done'], content: DONE }]);
        assert.equal((read.consolidation as Record<string, unknown>).kind, 'compaction');
      } finally {
        await server.close();
      }
    } finally {
      await home.remove();
    }
  });

  it('as a CLI: history list and show render compactions; a new process finds pre-images from the snapshot; a damaged one is skipped with a warning', async () => {
    const home = await tempDir();
    try {
      const storage = await compactedSpace(home.dir);
      const env = { LIVE_MEM_HOME: home.dir };
      const list = await cli(env, ['history', 'list', 'proj']);
      assert.equal(list.exitCode, 0, list.stderr);
      assert.match(list.stdout, /^consolidation_id\s+kind\s+committed_at\s+holds\s+files\s+by$/m);
      assert.match(list.stdout, new RegExp(`^${CID}\\s+compaction\\s+2099-03-05T12:00:00.000Z\\s+1 pre-image\\(s\\)\\s+progress\\.md\\s+planted$`, 'm'));
      assert.match(list.stdout, /^\S+\s+consolidation\s+\S+\s+1 note\(s\)\s+progress\.md/m);
      const show = await cli(env, ['history', 'show', 'proj', CID]);
      assert.equal(show.exitCode, 0, show.stderr);
      assert.ok(show.stdout.startsWith(`── progress.md#Progress > Done (before compaction)\n${DONE}`), show.stdout);
      assert.match(show.stdout, new RegExp(`1 pre-image\\(s\\): the sections compaction ${CID} rewrote, as they were`));
      assert.deepEqual(JSON.parse((await cli(env, ['history', 'show', 'proj', CID, '--json'])).stdout).preimages[0].path, ['Progress', 'Done']);

      // The first search builds the index and writes its snapshot, which covers the compaction.
      const first = await cli(env, ['recall', 'proj', 'pelican', '--sources', 'bank_history', '--json']);
      assert.equal(first.exitCode, 0, first.stderr);
      assert.equal(JSON.parse(first.stdout).results[0].compaction_id, CID);
      const [key] = (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'));
      assert.ok(key, 'a snapshot was written');
      const { header } = decodeSnapshot((await storage.get(key))!.body, bm25Engine);
      assert.ok(header.history.includes(CID) && header.preimages?.[CID]?.sections.length === 1);
      // With its record.json moved aside, only the snapshot can tell a new process what the pre-image is.
      const record = await storage.get(`proj/history/${CID}/record.json`);
      await storage.delete(`proj/history/${CID}/record.json`);
      const cold = await cli(env, ['recall', 'proj', 'pelican importer', '--json']);
      assert.equal(cold.exitCode, 0, cold.stderr);
      assert.equal(JSON.parse(cold.stdout).results[0].superseded_at, '2099-03-05T12:00:00.000Z', cold.stdout);
      await storage.put(`proj/history/${CID}/record.json`, record!.body);

      await plantCompaction(storage, 'proj', {
        id: '20990306T120000-cmp002',
        committed_at: '2099-03-06T12:00:00.000Z',
        sections: [{ filename: 'progress.md', path: ['Progress', 'Next'], content: '## Next\n\n- the kingfisher dashboard\n' }],
      });
      await storage.put('proj/history/20990306T120000-cmp002/preimages.json', 'not json');
      const skipped = await cli(env, ['recall', 'proj', 'pelican kingfisher']);
      assert.equal(skipped.exitCode, 0, skipped.stderr);
      assert.match(
        skipped.stdout,
        new RegExp(`bank_history {2}progress\\.md#Progress > Done {2}earlier version, replaced 2099-03-05T12:00:00.000Z by ${CID}\n`),
      );
      assert.doesNotMatch(skipped.stdout, /kingfisher dashboard/);
      assert.match(skipped.stderr, /proj\/history\/20990306T120000-cmp002\/preimages\.json is not valid JSON: the search index leaves it out/);
      assert.equal((await cli(env, ['history', 'list', 'proj'])).exitCode, 0);
    } finally {
      await home.remove();
    }
  });
});
