/**
 * Windows line endings (`\r\n`), old Mac ones (`\r`) and byte-order marks from every way text gets
 * into a space — a person's `bank write` of a file, `space update-rules` from a file, an imported
 * archive, a model's reply — then two consolidations editing that text, on the built binary with a
 * scripted model; and `doctor` finding such text planted in the store, `--fix` normalising it as a
 * revision. Before, every later consolidation failed ("markdown lexer lost characters").
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { execa } from 'execa';
import { edit, plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../helpers/scripted-llm.js';
import { fsStore, type Store } from '../helpers/stores.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
const crlf = (text: string) => text.replace(/\n/g, '\r\n');
const DECISIONS = '# Decisions\n\n## Log\n\n- chose Postgres\n\n## Next\n\n- backups\n';
const RULES = `# Rules

## Files

### decisions.md
What was decided, and what comes next. Append-only: existing entries are kept.

### activeContext.md
What is happening now. Rewritten at every consolidation.
`;

/** Two windows' plans: each appends to a section of decisions.md (append-only in RULES: it may only grow). */
const TWO_EDITS: Step[] = [
  { reply: plan([edit('decisions.md', [{ op: 'append', section: 'Decisions > Log', content: '- chose SQLite for tests' }])], 'Synthesis one.') },
  { reply: plan([edit('decisions.md', [{ op: 'append', section: 'Decisions > Next', content: '- restore drills' }])], 'Synthesis two.') },
];

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
  });

const text = async (storage: StorageDriver, key: string) => (await storage.get(key))?.body.toString('utf8');
const foreign = /\r|^\uFEFF/;

describe('line endings other than \\n, from every entry point', () => {
  let store: Store;
  let files: Awaited<ReturnType<typeof tempDir>>;
  const servers: ScriptedLlm[] = [];
  beforeEach(async () => {
    store = await fsStore();
    files = await tempDir();
  });
  afterEach(async () => {
    await store.remove();
    await files.remove();
  });
  after(async () => Promise.all(servers.map((server) => server.close())));

  const model = async (steps: Step[]) => {
    const server = await startScriptedLlm(steps);
    servers.push(server);
    return server;
  };
  const note = (spaceId: string, content: string) =>
    createCore({ storage: store.storage }).notes.write(owner, { space_id: spaceId, category: 'decision', content });

  /** A note, then a consolidation by the CLI, `times` times: each must commit (status ok). */
  async function consolidations(spaceId: string, llm: ScriptedLlm, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      await note(spaceId, `decision ${i}`);
      const run = await cli({ ...store.env, ...llm.env() }, ['consolidate', spaceId, '--json']);
      assert.equal(run.exitCode, 0, `consolidation ${i + 1}: ${run.stdout}${run.stderr}`);
      const result = JSON.parse(run.stdout);
      assert.equal(result.status, 'ok', `consolidation ${i + 1}: ${result.message}`);
      assert.equal(result.operations_applied, 1);
    }
  }

  const assertTwoEditsLanded = async (spaceId: string) => {
    const decisions = (await text(store.storage, `${spaceId}/bank/decisions.md`)) ?? '';
    assert.doesNotMatch(decisions, foreign);
    assert.match(decisions, /## Log\n\n- chose Postgres\n\n- chose SQLite for tests\n\n## Next\n\n- backups\n\n- restore drills\n$/);
  };

  it('bank write of a CRLF file: stored with \\n, and two consolidations edit it', async () => {
    await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj', rules: RULES });
    const file = path.join(files.dir, 'decisions.md');
    await writeFile(file, `\uFEFF${crlf(DECISIONS)}`);
    const written = await cli(store.env, ['bank', 'write', 'proj', 'decisions.md', file, '--json']);
    assert.equal(written.exitCode, 0, written.stderr);
    assert.equal(await text(store.storage, 'proj/bank/decisions.md'), DECISIONS);
    await consolidations('proj', await model(TWO_EDITS), 2);
    await assertTwoEditsLanded('proj');
  });

  it('space update-rules from a CRLF file: stored with \\n, read (append-only), and two consolidations succeed', async () => {
    await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj' });
    await store.storage.put('proj/bank/decisions.md', DECISIONS);
    const version = JSON.parse((await cli(store.env, ['space', 'rules', 'proj', '--json'])).stdout).version as string;
    const file = path.join(files.dir, 'rules.md');
    await writeFile(file, crlf(RULES));
    const updated = await cli(store.env, ['space', 'update-rules', 'proj', file, '--if-match', version, '--json']);
    assert.equal(updated.exitCode, 0, updated.stderr);
    assert.equal(await text(store.storage, 'proj/_rules.md'), RULES);
    // The rules are read: decisions.md is append-only, so a plan that drops a line of it is refused.
    const shrink = await model([{ reply: plan([rewrite('decisions.md', DECISIONS.replace('- backups\n', '- nothing\n'))]) }]);
    await note('proj', 'backups are dropped');
    const refused = JSON.parse((await cli({ ...store.env, ...shrink.env() }, ['consolidate', 'proj', '--json'])).stdout);
    assert.equal(refused.status, 'error');
    assert.match(refused.message, /decisions\.md is append-only \(rules\)/);
    await consolidations('proj', await model(TWO_EDITS), 2);
    await assertTwoEditsLanded('proj');
  });

  it('an imported archive with CRLF, CR and BOM files: stored with \\n, and two consolidations edit them', async () => {
    // The space as an older version or a Windows hand left it, exported as it is.
    const source = await fsStore();
    try {
      await createCore({ storage: source.storage }).spaces.create(owner, { space_id: 'old' });
      await source.storage.put('old/_rules.md', crlf(RULES));
      await source.storage.put('old/bank/decisions.md', `\uFEFF${crlf(DECISIONS)}`);
      await source.storage.put('old/bank/activeContext.md', '# Active\r\rNow: backups.\r');
      await source.storage.put('old/_synthesis.md', 'One.\r\nTwo.\r\n');
      const archive = path.join(files.dir, 'old.tar.gz');
      const exported = await cli(source.env, ['export', 'old', '-o', archive]);
      assert.equal(exported.exitCode, 0, exported.stderr);
      const imported = await cli(store.env, ['import', archive, '--as', 'proj', '--json']);
      assert.equal(imported.exitCode, 0, imported.stderr);
    } finally {
      await source.remove();
    }
    assert.equal(await text(store.storage, 'proj/bank/decisions.md'), DECISIONS);
    assert.equal(await text(store.storage, 'proj/bank/activeContext.md'), '# Active\n\nNow: backups.\n');
    assert.equal(await text(store.storage, 'proj/_rules.md'), RULES);
    assert.equal(await text(store.storage, 'proj/_synthesis.md'), 'One.\nTwo.\n');
    await consolidations('proj', await model(TWO_EDITS), 2);
    await assertTwoEditsLanded('proj');
  });

  it("a model's reply with CRLF: the bank and the synthesis stored with \\n, and two more consolidations edit them", async () => {
    await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj', rules: RULES });
    const llm = await model([{ reply: plan([rewrite('decisions.md', crlf(DECISIONS))], 'Line one.\r\nLine two.\r') }, ...TWO_EDITS]);
    await note('proj', 'we chose Postgres');
    const first = JSON.parse((await cli({ ...store.env, ...llm.env() }, ['consolidate', 'proj', '--json'])).stdout);
    assert.equal(first.status, 'ok', first.message);
    assert.equal(await text(store.storage, 'proj/bank/decisions.md'), DECISIONS);
    assert.equal(await text(store.storage, 'proj/_synthesis.md'), 'Line one.\nLine two.\n');
    await consolidations('proj', llm, 2);
    await assertTwoEditsLanded('proj');
  });

  it('doctor names CRLF, CR and BOM text planted in the store; --fix normalises it as a revision; consolidations go on', async () => {
    await createCore({ storage: store.storage }).spaces.create(owner, { space_id: 'proj' });
    const planted = `\uFEFF${crlf(DECISIONS)}`;
    await store.storage.put('proj/bank/decisions.md', planted);
    await store.storage.put('proj/bank/techContext.md', '# Tech\r\rNode 20.\r');
    await store.storage.put('proj/bank/progress.md', '# Progress\n\n- fine\n');
    await store.storage.put('proj/_rules.md', crlf(RULES));
    await store.storage.put('proj/_synthesis.md', 'One.\r\nTwo.\r\n');

    const sick = await cli(store.env, ['doctor', 'proj', '--json']);
    const found = (JSON.parse(sick.stdout).findings as Array<{ check: string; status: string; message: string; fixable: boolean }>).filter(
      (finding) => finding.check === 'line-endings',
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]?.status, 'warn');
    assert.equal(found[0]?.fixable, true);
    assert.match(
      found[0]?.message ?? '',
      /4 files of 'proj' with .*: proj\/_rules\.md, proj\/_synthesis\.md, proj\/bank\/decisions\.md, proj\/bank\/techContext\.md$/,
    );
    assert.equal(await text(store.storage, 'proj/bank/decisions.md'), planted, 'checking changes nothing');
    const human = await cli(store.env, ['doctor', 'proj']);
    assert.match(human.stdout, /line-endings: .*proj\/bank\/decisions\.md/);

    const fixed = await cli(store.env, ['doctor', 'proj', '--fix', '--json']);
    assert.equal(fixed.exitCode, 0, fixed.stderr);
    const repaired = (JSON.parse(fixed.stdout).findings as Array<{ check: string; status: string; fixed?: boolean; message: string }>).find(
      (finding) => finding.check === 'line-endings',
    );
    assert.equal(repaired?.fixed, true);
    assert.equal(repaired?.status, 'ok');
    const revision = /\(revision ([\w-]+)\)/.exec(repaired?.message ?? '')?.[1];
    assert.ok(revision, repaired?.message);
    assert.equal(await text(store.storage, 'proj/bank/decisions.md'), DECISIONS);
    assert.equal(await text(store.storage, 'proj/bank/techContext.md'), '# Tech\n\nNode 20.\n');
    assert.equal(await text(store.storage, 'proj/_rules.md'), RULES);
    assert.equal(await text(store.storage, 'proj/_synthesis.md'), 'One.\nTwo.\n');

    // Through the commit protocol: a revision in history, each file's text before kept.
    const history = JSON.parse((await cli(store.env, ['history', 'list', 'proj', '--json'])).stdout).consolidations as Array<Record<string, unknown>>;
    assert.deepEqual(
      history.map((entry) => [entry.consolidation_id, entry.kind, entry.action]),
      [[revision, 'revision', 'normalize']],
    );
    const shown = await cli(store.env, ['history', 'show', 'proj', revision as string, '--json']);
    assert.match(shown.stdout, /chose Postgres\\r\\n/, 'the text before, as it was');

    const clean = JSON.parse((await cli(store.env, ['doctor', 'proj', '--json'])).stdout);
    assert.deepEqual(
      clean.findings.filter((finding: { check: string }) => finding.check === 'line-endings').map((finding: { status: string }) => finding.status),
      ['ok'],
    );
    await consolidations('proj', await model(TWO_EDITS), 2);
    await assertTwoEditsLanded('proj');
  });
});
