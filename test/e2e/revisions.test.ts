/**
 * Corrections by people end to end: the built binary as a CLI process, and the MCP server it serves
 * (in this process); a correction killed (SIGKILL) at each point of its commit, on fs and on S3 (radosgw).
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { listKeys } from '../../src/storage/list.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { requireS3OrSkip } from '../helpers/s3.js';
import { fsStore, s3Store, type Store } from '../helpers/stores.js';

const owner = ownerCaller('tester');
const OLD = '# Decisions\n\n- use Postgres\n';
const NEW = '# Decisions\n\n- use SQLite: Postgres was never chosen\n';

const cli = (env: Record<string, string>, args: string[], input?: string) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
    ...(input !== undefined ? { input } : {}),
  });

async function seed(makeStore: () => Promise<Store>): Promise<Store> {
  const store = await makeStore();
  await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj' });
  await store.storage.put('proj/bank/decisions.md', OLD);
  return store;
}

const bankText = async (storage: StorageDriver) => (await storage.get('proj/bank/decisions.md'))?.body.toString('utf8');
const revisionRecords = async (storage: StorageDriver) => (await listKeys(storage, 'proj/history/')).filter((key) => key.endsWith('/record.json'));

describe('corrections from the CLI', () => {
  let store: Store;
  before(async () => {
    store = await seed(fsStore);
  });
  after(async () => store?.remove());

  it('write against the version read, edit in $EDITOR, delete, revert, update the rules: each a revision in history', async () => {
    const { env, storage } = store;
    const read = JSON.parse((await cli(env, ['bank', 'read', 'proj', 'decisions.md', '--json'])).stdout);
    assert.match(read.version, /^[0-9a-f]{16}$/);

    const blind = await cli(env, ['bank', 'write', 'proj', 'decisions.md', '-'], NEW);
    assert.equal(blind.exitCode, 2, 'an existing file needs --if-match');
    assert.match(blind.stderr, /if_match|--if-match|version/);
    const stale = await cli(env, ['bank', 'write', 'proj', 'decisions.md', '-', '--if-match', '0000000000000000'], NEW);
    assert.equal(stale.exitCode, 1);
    assert.match(stale.stderr, /changed since you read it/);
    assert.equal(await bankText(storage), OLD, 'refusals change nothing');

    const written = await cli(
      env,
      ['bank', 'write', 'proj', 'decisions.md', '-', '--if-match', read.version, '--reason', 'the model invented Postgres', '--json'],
      NEW,
    );
    assert.equal(written.exitCode, 0, written.stderr);
    const revision = JSON.parse(written.stdout).revision_id as string;
    assert.equal(await bankText(storage), NEW);

    // $EDITOR gets the text, and what it saves is written against the version read before it opened.
    const edited = await cli({ ...env, EDITOR: `sed -i 's/SQLite/SQLite 3/'` }, ['bank', 'edit', 'proj', 'decisions.md', '--reason', 'precise']);
    assert.equal(edited.exitCode, 0, edited.stderr);
    assert.equal(await bankText(storage), NEW.replace('SQLite', 'SQLite 3'));

    const history = JSON.parse((await cli(env, ['history', 'list', 'proj', '--json'])).stdout).consolidations as Array<Record<string, unknown>>;
    assert.deepEqual(
      history.map((entry) => [entry.kind, entry.action, entry.reason]),
      [
        ['revision', 'write', 'precise'],
        ['revision', 'write', 'the model invented Postgres'],
      ],
    );
    const shown = await cli(env, ['history', 'show', 'proj', revision]);
    assert.match(shown.stdout, /use Postgres/, 'history shows the text before');

    // The later edit changed the file: the first revision cannot be reverted silently over it.
    const refused = await cli(env, ['bank', 'revert', 'proj', revision, '--yes']);
    assert.equal(refused.exitCode, 1);
    assert.match(refused.stderr, /changed since revision/);
    const undo = await cli(env, ['bank', 'revert', 'proj', history[0]?.consolidation_id as string, '--yes']);
    assert.equal(undo.exitCode, 0, undo.stderr);
    assert.equal(await bankText(storage), NEW);

    const unconfirmed = await cli(env, ['bank', 'delete', 'proj', 'decisions.md']);
    assert.equal(unconfirmed.exitCode, 2);
    assert.match(unconfirmed.stderr, /--yes/);
    assert.equal((await cli(env, ['bank', 'delete', 'proj', 'decisions.md', '--yes'])).exitCode, 0);
    assert.equal(await bankText(storage), undefined);

    const rules = JSON.parse((await cli(env, ['space', 'rules', 'proj', '--json'])).stdout);
    const rulesFile = path.join(env.LIVE_MEM_HOME as string, 'rules.md');
    await writeFile(rulesFile, '# Rules\n\n### decisions.md\nBudget: 800 tokens\n');
    const updated = await cli(env, ['space', 'update-rules', 'proj', rulesFile, '--if-match', rules.version, '--reason', 'one file']);
    assert.equal(updated.exitCode, 0, updated.stderr);
    assert.equal((await storage.get('proj/_rules.md'))?.body.toString(), '# Rules\n\n### decisions.md\nBudget: 800 tokens\n');
  });

  it('a writer token may not correct: forbidden, nothing changes', async () => {
    const { env, storage } = store;
    const created = JSON.parse((await cli(env, ['token', 'create', 'writer', '-p', 'read,write', '-s', 'proj', '--json'])).stdout);
    const before = await storage.get('proj/_rules.md');
    const refused = await cli({ ...env, LIVE_MEM_TOKEN: created.token }, ['bank', 'write', 'proj', 'x.md', '-'], '# X\n');
    assert.equal(refused.exitCode, 1);
    assert.match(refused.stderr, /forbidden|admin/i);
    assert.equal(await storage.get('proj/bank/x.md'), null);
    assert.deepEqual((await storage.get('proj/_rules.md'))?.body, before?.body);
  });
});

describe('bank edit runs $EDITOR as git does', () => {
  /**
   * An editor that records every argument it is given (NUL-separated, in $ARGS_LOG) and appends a
   * line to its last argument only: before the fix, its first argument was /bin/sh.
   */
  async function recordingEditor(dir: string): Promise<string> {
    const script = path.join(dir, 'my editor.sh');
    await writeFile(script, '#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGS_LOG"\nfor last; do :; done\nprintf \'\\n- edited\\n\' >> "$last"\n');
    await chmod(script, 0o755);
    return script;
  }
  const argsOf = async (log: string) => (await readFile(log, 'utf8')).split('\0').slice(0, -1);

  it("the draft is the one argument after the editor's own words, also with words of its own and spaces in both paths", async () => {
    const store = await seed(fsStore);
    try {
      const home = store.env.LIVE_MEM_HOME as string;
      const script = await recordingEditor(home);
      const tmp = path.join(home, 'tmp with space');
      await mkdir(tmp);
      const log = path.join(home, 'args.log');
      const env = { ...store.env, TMPDIR: tmp, ARGS_LOG: log };
      const draft = (args: string[]) => args[args.length - 1] as string;

      const plain = await cli({ ...env, EDITOR: `'${script}'` }, ['bank', 'edit', 'proj', 'decisions.md']);
      assert.equal(plain.exitCode, 0, plain.stderr);
      const first = await argsOf(log);
      assert.equal(first.length, 1, `one argument: ${JSON.stringify(first)}`);
      assert.ok(draft(first).startsWith(`${tmp}/live-mem-edit-`) && draft(first).endsWith('/decisions.md'), draft(first));
      assert.equal(await bankText(store.storage), `${OLD}\n- edited\n`);

      // $VISUAL wins over $EDITOR, and its own words come first, each an argument of its own.
      const worded = await cli({ ...env, EDITOR: 'false', VISUAL: `"${script}" --wait -u NONE` }, ['bank', 'edit', 'proj', 'decisions.md']);
      assert.equal(worded.exitCode, 0, worded.stderr);
      const second = await argsOf(log);
      assert.deepEqual(second.slice(0, -1), ['--wait', '-u', 'NONE']);
      assert.ok(draft(second).startsWith(`${tmp}/live-mem-edit-`) && draft(second).endsWith('/decisions.md'), draft(second));
      assert.equal(await bankText(store.storage), `${OLD}\n- edited\n\n- edited\n`);
    } finally {
      await store.remove();
    }
  });
});

describe('corrections over MCP', () => {
  it('are not offered by default (all): a model is not handed the bank past consolidation', async () => {
    const store = await fsStore();
    const server = await inProcessServer(store.env);
    try {
      const { tools } = await server.client.listTools();
      for (const name of ['bank_write', 'bank_delete', 'bank_revert', 'space_update_rules']) assert.ok(!tools.some((tool) => tool.name === name), name);
    } finally {
      await server.close();
      await store.remove();
    }
  });

  it('bank_read gives the version, bank_write takes it, history_list shows the revision, bank_revert undoes it', async () => {
    const store = await seed(fsStore);
    const server = await inProcessServer({ ...store.env, LIVE_MEM_AGENT: 'reviewer', LIVE_MEM_TOOLS: 'admin' });
    try {
      const read = await server.call('bank_read', { space_id: 'proj', filename: 'decisions.md' });
      const stale = await server.call('bank_write', { space_id: 'proj', filename: 'decisions.md', content: NEW, if_match: 'ffffffffffffffff' });
      assert.equal(stale.status, 'conflict');
      const written = await server.call('bank_write', {
        space_id: 'proj',
        filename: 'decisions.md',
        edits: [{ op: 'replace', section: 'Decisions', content: '- use SQLite: Postgres was never chosen' }],
        if_match: read.version,
        reason: 'wrong database',
      });
      assert.equal(written.status, 'ok', JSON.stringify(written));
      const history = await server.call('history_list', { space_id: 'proj' });
      const [entry] = history.consolidations as Array<Record<string, unknown>>;
      assert.equal(entry?.kind, 'revision');
      assert.equal(entry?.by, 'reviewer');
      assert.equal(entry?.reason, 'wrong database');
      const unconfirmed = await server.call('bank_revert', { space_id: 'proj', revision_id: written.revision_id });
      assert.equal(unconfirmed.status, 'error');
      assert.match(String(unconfirmed.message), /confirm/);
      const reverted = await server.call('bank_revert', { space_id: 'proj', revision_id: written.revision_id, confirm: true });
      assert.equal(reverted.status, 'ok', JSON.stringify(reverted));
      assert.equal(await bankText(store.storage), OLD);
    } finally {
      await server.close();
      await store.remove();
    }
  });
});

/** A correction killed at each point of the commit: the file is old or new, never mixed; the next holder of the lease finishes it, once. */
function killSuite(label: string, makeStore: () => Promise<Store>): void {
  describe(`a correction killed (SIGKILL) mid-commit, on ${label}`, () => {
    for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-history']) {
      it(`killed ${point}: the file whole old or whole new; the next backup finishes it; one revision in history`, async () => {
        const store = await seed(makeStore);
        try {
          const version = JSON.parse((await cli(store.env, ['bank', 'read', 'proj', 'decisions.md', '--json'])).stdout).version;
          const killed = await cli({ ...store.env, LIVE_MEM_TEST_KILL_AT: point }, ['bank', 'write', 'proj', 'decisions.md', '-', '--if-match', version], NEW);
          assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
          const between = await bankText(store.storage);
          assert.ok(between === OLD || between === NEW, 'the whole file old or whole file new');
          // The next holder of the space's lease (a backup here) rolls a committed correction forward.
          const backup = await cli(store.env, ['backup', 'create', 'proj', '--json']);
          assert.equal(backup.exitCode, 0, backup.stderr);
          assert.equal(await bankText(store.storage), point === 'before-commit' ? OLD : NEW);
          assert.equal((await revisionRecords(store.storage)).length, point === 'before-commit' ? 0 : 1);
          assert.equal(await store.storage.get('proj/_consolidation/pending.json'), null);
        } finally {
          await store.remove();
        }
      });
    }
  });
}

killSuite('fs', fsStore);
const s3 = requireS3OrSkip('corrections on S3');
if (s3) killSuite('S3 (radosgw)', () => s3Store(s3));
