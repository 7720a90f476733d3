/**
 * Compaction end to end: the built binary (its CLI as a process, the MCP server it serves in this
 * process) with the real `openai` client talking to a scripted model; processes killed with SIGKILL at
 * each point of the commit; two processes compacting one space at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { checkDigests } from '../../src/core/compaction/guards.js';
import { splitSections } from '../../src/core/compaction/sections.js';
import { createCore } from '../../src/core/core.js';
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { bankModel, compactionRequest, digestOf, digesting, progressFile } from '../helpers/compaction.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { requireS3OrSkip } from '../helpers/s3.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { fsStore, rerunPastLease, s3Store, type Store } from '../helpers/stores.js';

const owner = ownerCaller('tester');
const BUDGET = 1200;
const ORIGINAL = progressFile(20);

/** What the well-behaved scripted model's digests make of ORIGINAL. */
function compacted(): string {
  const file = splitSections('progress.md', ORIGINAL, BUDGET);
  const digests = file.sections
    .filter((s) => !s.protected)
    .map((s) => ({ id: s.id, content: digestOf({ id: s.id, path: s.path, tokens: s.tokens, protected: s.protected, content: s.text }) }));
  return checkDigests(file, digests).content;
}

/** A space whose progress.md is ORIGINAL, over its budget of BUDGET tokens. */
async function seed(makeStore: () => Promise<Store> = fsStore): Promise<Store> {
  const store = await makeStore();
  await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj' });
  await store.storage.put('proj/bank/progress.md', ORIGINAL);
  return { ...store, env: { ...store.env, LIVE_MEM_BANK_FILE_BUDGET_TOKENS: String(BUDGET) } };
}

const llmEnv = (llm: ScriptedLlm) => ({ ...llm.env(), LIVE_MEM_LOG_LEVEL: 'warn' });

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

const progress = async (storage: StorageDriver) => (await storage.get('proj/bank/progress.md'))?.body.toString('utf8');

/** The history holds exactly one compaction, complete, with its pre-images; nothing is pending. */
async function assertOneCompaction(storage: StorageDriver): Promise<void> {
  const keys = await listKeys(storage, 'proj/history/');
  const preimages = keys.filter((key) => key.endsWith('/preimages.json'));
  assert.equal(preimages.length, 1, keys.join(', '));
  const folder = (preimages[0] as string).slice(0, -'preimages.json'.length);
  assert.deepEqual(keys.filter((key) => key.startsWith(folder)).sort(), [`${folder}preimages.json`, `${folder}record.json`]);
  const sections = JSON.parse((await storage.get(preimages[0] as string))?.body.toString() ?? '{}').sections as Array<{ content: string }>;
  assert.ok(sections.length > 0);
  for (const section of sections) assert.ok(ORIGINAL.includes(section.content), 'a pre-image is the original text');
  const record = JSON.parse((await storage.get(`${folder}record.json`))?.body.toString() ?? '{}');
  assert.equal(record.kind, 'compaction');
  // What each digest kept of its section (core/retention) is in the record, one entry per pre-image.
  assert.deepEqual(
    (record.retention as Array<{ path: string[] }>).map((entry) => entry.path),
    sections.map((section) => (section as { path?: string[] }).path),
  );
  assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
}

describe('compaction end to end (fs)', () => {
  let llm: ScriptedLlm;
  before(async () => {
    llm = await startScriptedLlm([digesting()]);
  });
  after(async () => llm?.close());

  it('live-mem compact: --dry-run writes nothing, then the file is compacted under budget; the text view names each file', async () => {
    const store = await seed();
    try {
      const env = { ...store.env, ...llmEnv(llm) };
      const dry = await cli(env, ['compact', 'proj', '--dry-run', '--json']);
      assert.equal(dry.exitCode, 0, dry.stderr);
      const planned = JSON.parse(dry.stdout);
      assert.equal(planned.dry_run, true);
      assert.ok(planned.files[0].tokens_after < planned.files[0].tokens_before);
      assert.equal(await progress(store.storage), ORIGINAL);
      assert.deepEqual(await listKeys(store.storage, 'proj/history/'), []);

      const run = await cli(env, ['compact', 'proj', '--file', 'progress.md']);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(
        run.stdout,
        /^filename\s+tokens_before\s+tokens_after\s+budget_tokens\s+sections_digested\nprogress\.md\s+\d+\s+\d+\s+1200\s+\d+\nok · compaction \d{8}T\d{6}-/,
      );
      assert.equal(await progress(store.storage), compacted());
      await assertOneCompaction(store.storage);
    } finally {
      await store.remove();
    }
  });

  it('bank_compact over MCP: compacts, and a guard refusal is an error result that changes nothing', async () => {
    const store = await seed();
    const spoiling = await startScriptedLlm([digesting((digests) => digests.slice(0, 1))]);
    try {
      const refusing = await inProcessServer({ ...store.env, ...llmEnv(spoiling) });
      try {
        const result = await refusing.call('bank_compact', { space_id: 'proj' });
        assert.equal(result.status, 'error');
        assert.match(String(result.message), /budget guard/);
      } finally {
        await refusing.close();
      }
      assert.equal(await progress(store.storage), ORIGINAL);
      const server = await inProcessServer({ ...store.env, ...llmEnv(llm) });
      try {
        const result = await server.call('bank_compact', { space_id: 'proj' });
        assert.equal(result.status, 'ok', String(result.message));
        assert.match(String(result.compaction_id), /^\d{8}T\d{6}-/);
      } finally {
        await server.close();
      }
      assert.equal(await progress(store.storage), compacted());
    } finally {
      await spoiling.close();
      await store.remove();
    }
  });

  for (const mode of ['auto', 'off']) {
    it(`LIVE_MEM_COMPACTION=${mode}: live-mem consolidate that leaves progress.md over budget ${mode === 'auto' ? 'compacts it before the process exits' : 'leaves it so'}`, async () => {
      const store = await seed();
      const model = await startScriptedLlm([bankModel()]);
      try {
        await store.storage.put('proj/bank/progress.md', progressFile(8));
        const budget = Math.ceil(progressFile(8).length / 3.5) + 50;
        await createCore({ storage: store.storage }).notes.write(owner, { space_id: 'proj', category: 'progress', content: 'shipped one more' });
        const env = { ...store.env, ...llmEnv(model), LIVE_MEM_BANK_FILE_BUDGET_TOKENS: String(budget), LIVE_MEM_SUMMARIES: 'off', LIVE_MEM_COMPACTION: mode };
        const run = await cli(env, ['consolidate', 'proj', '-q', '--json']);
        assert.equal(run.exitCode, 0, run.stdout + run.stderr);
        const compactions = model.requests.filter((request) => compactionRequest(request.messages)).length;
        const tokens = Math.ceil(((await progress(store.storage)) ?? '').length / 3.5);
        const preimages = (await listKeys(store.storage, 'proj/history/')).filter((key) => key.endsWith('/preimages.json'));
        if (mode === 'auto') {
          assert.equal(compactions, 1);
          assert.ok(tokens <= budget, `${tokens} tokens, budget ${budget}`);
          assert.equal(preimages.length, 1);
        } else {
          assert.equal(compactions, 0);
          assert.ok(tokens > budget);
          assert.equal(preimages.length, 0);
        }
      } finally {
        await model.close();
        await store.remove();
      }
    });
  }
});

/** The commit of a compaction, killed at each point or raced by a second process, on one store. */
function commitSuite(label: string, makeStore: () => Promise<Store>): void {
  describe(`compaction commit end to end on ${label}`, () => {
    for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-history']) {
      it(`a process killed (SIGKILL) ${point}: the file is old or new, never mixed; the next run finishes; pre-images once`, async () => {
        const store = await seed(makeStore);
        const counting = await startScriptedLlm([digesting()]);
        try {
          const env = { ...store.env, ...llmEnv(counting), LIVE_MEM_CONSOLIDATION_LEASE_S: '2' };
          const killed = await cli({ ...env, LIVE_MEM_TEST_KILL_AT: point }, ['compact', 'proj', '-q']);
          assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
          const between = await progress(store.storage);
          assert.ok(between === ORIGINAL || between === compacted(), 'the whole file old or whole file new');
          // The dead holder's lease is taken over at once (or, if its death cannot be told, once it expires).
          const rerun = await rerunPastLease(store.storage, 'proj', () => cli(env, ['compact', 'proj', '-q', '--json']));
          assert.equal(rerun.exitCode, 0, rerun.stdout + rerun.stderr);
          const result = JSON.parse(rerun.stdout);
          assert.equal(result.recovered !== undefined, point !== 'before-commit');
          assert.equal(counting.requests.length, point === 'before-commit' ? 2 : 1, 'a committed compaction is never asked for again');
          assert.equal(await progress(store.storage), compacted());
          await assertOneCompaction(store.storage);
        } finally {
          await counting.close();
          await store.remove();
        }
      });
    }

    it('two processes compacting one space at once: exactly one runs, the other gets conflict', async () => {
      const store = await seed(makeStore);
      // The model answers the lease holder only once the other process has ended: the two overlap, however slowly each starts.
      let oneEnded: () => void = () => undefined;
      const slow = await startScriptedLlm([{ until: new Promise<void>((resolve) => (oneEnded = resolve)), then: digesting() }]);
      try {
        const env = { ...store.env, ...llmEnv(slow) };
        const started = [cli(env, ['compact', 'proj', '-q', '--json']), cli(env, ['compact', 'proj', '-q', '--json'])];
        void Promise.race(started).finally(oneEnded);
        const runs = await Promise.all(started);
        assert.deepEqual(runs.map((run) => JSON.parse(run.stdout).status).sort(), ['conflict', 'ok']);
        assert.deepEqual(runs.map((run) => run.exitCode).sort(), [0, 1]);
        assert.equal(slow.requests.length, 1);
        assert.equal(await progress(store.storage), compacted());
        await assertOneCompaction(store.storage);
      } finally {
        await slow.close();
        await store.remove();
      }
    });
  });
}

commitSuite('fs', fsStore);
const s3 = requireS3OrSkip('compaction on S3');
if (s3) commitSuite('S3 (radosgw)', () => s3Store(s3));
