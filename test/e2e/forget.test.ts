/**
 * Forget end to end: the built binary as a CLI process, and the MCP server it serves (in this process),
 * one warm (its index, caches and body cache filled) before another process forgets; a forget killed
 * (SIGKILL) at each point of its commit, on fs and on S3 (radosgw).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { forgetModelStep, keysHolding, SMALL_SUMMARIES, WORD } from '../helpers/forget.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type TestServer } from '../helpers/mcp-client.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv, type S3TestConfig } from '../helpers/s3.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
  });

interface Store {
  storage: StorageDriver;
  env: Record<string, string>;
  remove(): Promise<void>;
}

async function fsStore(): Promise<Store> {
  const home = await tempDir();
  return { storage: createFsDriver(home.dir), env: { LIVE_MEM_HOME: home.dir }, remove: home.remove };
}

async function s3Store(s3: S3TestConfig): Promise<Store> {
  const harness = await makeS3Harness();
  return { storage: harness.driver, env: s3ProcessEnv(s3, harness.prefix), remove: harness.cleanup };
}

interface Seeded extends Store {
  consolidated: string;
  /** Consolidated, then live: the two notes holding WORD. */
  forgotten: [string, string];
}

/** A space with a consolidated and a live note holding WORD, others beside, summaries quoting them, an index snapshot and a backup. */
async function seed(makeStore: () => Promise<Store>): Promise<Seeded> {
  const store = await makeStore();
  const llm = await startScriptedLlm([forgetModelStep]);
  try {
    const core = createCore({ storage: store.storage, llm: llm.client(), consolidation: { retryBackoffMs: 5 } });
    await core.spaces.create(owner, { space_id: 'proj' });
    const note = async (content: string) =>
      (await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: content.padEnd(500, '.') })).filename;
    const old = await note(`The ${WORD} password policy was discussed`);
    await note('The giraffe deploy went fine');
    const consolidated = (await core.consolidation.consolidate(owner, { space_id: 'proj' })).consolidations?.[0] as string;
    const live = await note(`A live ${WORD} remark`);
    await note('A live giraffe remark');
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL_SUMMARIES });
    await core.recall.rebuildIndex('proj');
    await core.backups.create(owner, { space_id: 'proj' });
    return { ...store, consolidated, forgotten: [old, live] };
  } finally {
    await llm.close();
  }
}

/** What a reader process finds of WORD through each read tool. */
async function findable(server: TestServer, consolidated: string): Promise<string[]> {
  const found: string[] = [];
  const search = await server.call('memory_search', { space_id: 'proj', query: WORD, limit: 50 });
  for (const hit of search.results as Array<{ source: string; ref: string; text: string }>)
    if (hit.text.includes(WORD)) found.push(`memory_search:${hit.source}:${hit.ref}`);
  const live = await server.call('live_search', { space_id: 'proj', query: WORD });
  for (const note of live.notes as Array<{ filename: string }>) found.push(`live_search:${note.filename}`);
  const read = await server.call('live_read', { space_id: 'proj' });
  for (const note of read.notes as Array<{ filename: string; content: string }>) if (note.content.includes(WORD)) found.push(`live_read:${note.filename}`);
  const history = await server.call('history_read', { space_id: 'proj', consolidation_id: consolidated });
  for (const note of history.notes as Array<{ filename: string; content: string }>)
    if (note.content.includes(WORD)) found.push(`history_read:${note.filename}`);
  const context = await server.call('memory_context', { space_id: 'proj', query: 'password policy remark', max_tokens: 8000 });
  if (String(context.text).includes(WORD)) found.push('memory_context');
  return found;
}

async function storeState(storage: StorageDriver): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  for (const key of await listKeys(storage, '')) if (!key.endsWith('/lock.json')) state.set(key, (await storage.get(key))?.body.toString('base64') ?? '');
  return state;
}

describe('forget from the CLI while an MCP server is warm', () => {
  let store: Seeded;
  let warm: TestServer;
  before(async () => {
    store = await seed(fsStore);
    warm = await inProcessServer({ ...store.env, LIVE_MEM_LOG_LEVEL: 'warn' });
  });
  after(async () => {
    await warm?.close();
    await store?.remove();
  });

  it('dry run, bad refs, then --yes: the warm server, a new one and the store hold nothing of the notes; the receipt lists every place', async () => {
    const { env, storage, consolidated, forgotten } = store;
    assert.ok((await findable(warm, consolidated)).length >= 5, 'found through every tool before');

    const before = await storeState(storage);
    const preview = await cli(env, ['forget', 'proj', ...forgotten, '--json']);
    assert.equal(preview.exitCode, 0, preview.stderr);
    const planned = JSON.parse(preview.stdout);
    assert.equal(planned.dry_run, true);
    assert.deepEqual(planned.live, [forgotten[1]]);
    const text = await cli(env, ['forget', 'proj', ...forgotten]);
    assert.match(text.stdout, /DRY RUN, nothing changed/);
    const ghost = '20260101T000000_ghost_observation_00000000.md';
    const missing = await cli(env, ['forget', 'proj', forgotten[0], ghost, '--yes']);
    assert.equal(missing.exitCode, 1);
    assert.match(missing.stderr, new RegExp(`no note ${ghost}.*nothing was forgotten`));
    const neither = await cli(env, ['forget', 'proj', '--yes']);
    assert.notEqual(neither.exitCode, 0);
    assert.deepEqual(await storeState(storage), before, 'dry runs and refusals change nothing');

    const done = await cli(env, ['forget', 'proj', ...forgotten, '--yes', '--reason', 'leaked a customer name', '--json']);
    assert.equal(done.exitCode, 0, done.stderr);
    const receipt = JSON.parse(done.stdout);
    assert.equal(receipt.dry_run, false);
    assert.equal(receipt.notes_count, 2);
    assert.deepEqual(receipt.live, [forgotten[1]]);
    assert.deepEqual(receipt.history, [{ consolidation_id: consolidated, file: `proj/history/${consolidated}/notes.json`, notes: [forgotten[0]] }]);
    assert.ok(receipt.summaries.length > 0);
    assert.ok(receipt.snapshots.length > 0);
    assert.equal(receipt.bank_review[0]?.consolidation_id, consolidated);
    assert.equal(receipt.backups.length, 1);
    assert.match(receipt.backups_note, /still hold these notes and were not changed/);
    for (const summary of receipt.summaries as Array<{ level: number; id: string }>) {
      assert.equal(await storage.get(`proj/_summaries/L${summary.level}/${summary.id}.json`), null, summary.id);
    }

    assert.deepEqual(await findable(warm, consolidated), [], 'the server warm before the forget');
    const fresh = await inProcessServer(store.env);
    try {
      assert.deepEqual(await findable(fresh, consolidated), [], 'a new server');
      const history = await fresh.call('history_list', { space_id: 'proj' });
      const [entry] = history.consolidations as Array<Record<string, unknown>>;
      assert.equal(entry?.kind, 'forget');
      assert.equal(entry?.reason, 'leaked a customer name');
      assert.equal(entry?.notes_count, 2);
      assert.ok(!JSON.stringify(history).includes(WORD));
    } finally {
      await fresh.close();
    }
    await warm.call('memory_search', { space_id: 'proj', query: 'giraffe' });
    assert.deepEqual(await keysHolding(storage, WORD), [], 'nothing of it left in the store but in the backup');
    const shown = await cli(env, ['history', 'list', 'proj']);
    assert.match(shown.stdout, /forget .*2 note\(s\) forgotten/);
  });

  it('the receipt in words: what went from where, the bank files to review, the backup rewritten (--purge-backups)', async () => {
    const { env, storage } = store;
    const names = JSON.parse((await cli(env, ['read', 'proj', '--json'])).stdout).notes as Array<{ filename: string }>;
    const target = names[0]?.filename as string;
    const shown = await cli(env, ['forget', 'proj', target, '--yes', '--purge-backups', '--reason', 'test']);
    assert.equal(shown.exitCode, 0, shown.stderr);
    assert.match(shown.stdout, /forgot 1 note\(s\)/);
    assert.match(shown.stdout, /removed from:/);
    assert.match(shown.stdout, new RegExp(`live/: ${target}`));
    assert.match(shown.stdout, /rewritten without these notes/);
    for (const key of await listKeys(storage, '_backups/')) assert.ok(!(await storage.get(key))?.body.includes(target), key);
  });

  it('memory_forget is offered with the admin tools only; a dry run over MCP changes nothing', async () => {
    const { tools } = await warm.client.listTools();
    assert.ok(!tools.some((tool) => tool.name === 'memory_forget'), 'not in the default profile');
    const admin = await inProcessServer({ ...store.env, LIVE_MEM_TOOLS: 'admin' });
    try {
      const before = await storeState(store.storage);
      const names = (await admin.call('history_read', { space_id: 'proj', consolidation_id: store.consolidated })).notes as Array<{ filename: string }>;
      const preview = await admin.call('memory_forget', { space_id: 'proj', refs: [names[0]?.filename] });
      assert.equal(preview.status, 'ok', JSON.stringify(preview));
      assert.equal(preview.dry_run, true);
      assert.equal((preview.notes as unknown[]).length, 1);
      const bad = await admin.call('memory_forget', { space_id: 'proj', refs: ['nope.md'], confirm: true });
      assert.equal(bad.status, 'error');
      assert.deepEqual(await storeState(store.storage), before);
    } finally {
      await admin.close();
    }
  });
});

function killSuite(label: string, makeStore: () => Promise<Store>): void {
  describe(`a forget killed (SIGKILL) mid-commit, on ${label}`, () => {
    for (const point of [
      'before-commit',
      'after-commit',
      'after-derived-delete',
      'after-history',
      'after-history-rewrite',
      'after-live-delete',
      'after-backup-purge',
    ]) {
      it(`killed ${point}: everything findable, or (once the next lease holder finishes it) nothing`, async () => {
        const store = await seed(makeStore);
        try {
          const killed = await cli({ ...store.env, LIVE_MEM_TEST_KILL_AT: point }, ['forget', 'proj', ...store.forgotten, '--yes', '--purge-backups']);
          assert.equal(killed.signal, 'SIGKILL', killed.stderr);
          // The next holder of the space's lease (a backup here) rolls a committed forget forward.
          const backup = await cli(store.env, ['backup', 'create', 'proj', '--json']);
          assert.equal(backup.exitCode, 0, backup.stderr);
          assert.equal(await store.storage.get('proj/_consolidation/pending.json'), null);
          const reader = await inProcessServer(store.env);
          try {
            const found = await findable(reader, store.consolidated);
            if (point === 'before-commit') {
              assert.ok(found.length >= 5, `everything still findable: ${found.join(', ')}`);
              assert.ok((await keysHolding(store.storage, WORD, 'proj/')).length > 0);
            } else {
              assert.deepEqual(found, []);
              assert.deepEqual(await keysHolding(store.storage, WORD, 'proj/'), []);
              const inBackups = [];
              for (const key of await listKeys(store.storage, '_backups/')) if ((await store.storage.get(key))?.body.includes(WORD)) inBackups.push(key);
              assert.deepEqual(inBackups, [], 'the backup rewritten without them');
              const history = await reader.call('history_list', { space_id: 'proj' });
              assert.equal((history.consolidations as Array<{ kind: string }>).filter((entry) => entry.kind === 'forget').length, 1);
            }
          } finally {
            await reader.close();
          }
        } finally {
          await store.remove();
        }
      });
    }
  });
}

killSuite('fs', fsStore);
const s3 = requireS3OrSkip('forget on S3');
if (s3) killSuite('S3 (radosgw)', () => s3Store(s3));
