/**
 * `bank_revert` of revision records an archive brought in: what it puts back passes every check a
 * person's write passes (the file's name, secrets masked, the rules' size), whoever wrote the record.
 * The built binary as a CLI process: an import of a crafted archive, then reverts.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { contentVersion } from '../../src/core/bank/bank-files.js';
import { listKeys } from '../../src/storage/list.js';
import { craftTarGz, validSpaceEntries } from '../helpers/craft-archive.js';
import { BIN } from '../helpers/mcp-client.js';
import { fsStore, type Store } from '../helpers/stores.js';
import { tempDir } from '../helpers/tmp.js';

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
  });

const TOKEN = `ghp_${'A1b2C3d4E5f6G7h8I9j0'.repeat(2)}`;
const NOW = '# Decisions\n\n- SQLite\n';
const RULES = '# Rules\n';

/** A revision record, as history keeps one: it changed `files` (each to the text `now` has), and the rules perhaps. */
function revision(id: string, files: Array<{ filename: string; before: string }>, rules?: string) {
  const record = {
    id,
    space_id: 'crafted',
    kind: 'revision',
    committed_at: '2026-01-02T00:00:00Z',
    notes: [],
    time_range: { oldest: null, newest: null },
    bank_files: files.map((file) => ({ filename: file.filename, kind: 'updated' })),
    metrics: {},
    preimages: files.length,
    revision: {
      action: rules === undefined ? 'write' : 'rules',
      by: 'someone',
      reason: null,
      files: files.map((file) => ({ filename: file.filename, existed: true, version_after: null })),
      ...(rules === undefined ? {} : { rules: { before: rules, version_after: contentVersion(RULES) } }),
    },
  };
  const preimages = { version: 1, sections: files.map((file) => ({ filename: file.filename, path: [], content: file.before })) };
  return [
    { path: `history/${id}/record.json`, body: JSON.stringify(record) },
    { path: `history/${id}/preimages.json`, body: JSON.stringify(preimages) },
  ];
}

describe('bank_revert of revisions an import brought', () => {
  let store: Store;
  let work: Awaited<ReturnType<typeof tempDir>>;
  const bank = async () => {
    const found: Record<string, string> = {};
    for (const key of await listKeys(store.storage, 'crafted/')) {
      if (!key.startsWith('crafted/history/')) found[key] = (await store.storage.get(key))?.body.toString('utf8') ?? '';
    }
    return found;
  };

  before(async () => {
    store = await fsStore();
    work = await tempDir();
    const entries = validSpaceEntries('crafted', (files) => {
      const rules = files.find((file) => file.path === '_rules.md') as { body: string };
      rules.body = RULES;
      files.push({ path: 'bank/decisions.md', body: NOW });
      // Each revision says the file was at a version it was not at: reverting it changes nothing but what the checks let through.
      files.push(...revision('20260102T000000-token1', [{ filename: 'decisions.md', before: `# Decisions\n\n- deploy with ${TOKEN}\n` }]));
      files.push(...revision('20260102T000001-nested', [{ filename: 'sub/nested.md', before: '# Nested\n' }]));
      files.push(...revision('20260102T000002-notmd1', [{ filename: 'notes.txt', before: 'plain text\n' }]));
      files.push(...revision('20260102T000003-rules1', [], `# Rules\n\n${'- a rule that goes on\n'.repeat(15_000)}`));
    });
    const archive = path.join(work.dir, 'crafted.tar.gz');
    await writeFile(archive, craftTarGz(entries));
    const imported = await cli(store.env, ['import', archive]);
    assert.equal(imported.exitCode, 0, imported.stderr);
  });
  after(async () => {
    await store?.remove();
    await work?.remove();
  });

  it('masks a secret the put-back text holds, as a write does', async () => {
    // The record says decisions.md was left at the version NOW has: it is, so the revert goes ahead.
    const record = JSON.parse((await store.storage.get('crafted/history/20260102T000000-token1/record.json'))?.body.toString('utf8') ?? '{}');
    record.revision.files[0].version_after = contentVersion(NOW);
    await store.storage.put('crafted/history/20260102T000000-token1/record.json', JSON.stringify(record));
    // The import masked the pre-image's secret already (it masks every file of an archive): put it back as a
    // hand, or an older version's import, would have left it, so the revert's own check is what is tested.
    const preimages = { version: 1, sections: [{ filename: 'decisions.md', path: [], content: `# Decisions\n\n- deploy with ${TOKEN}\n` }] };
    await store.storage.put('crafted/history/20260102T000000-token1/preimages.json', JSON.stringify(preimages));
    const reverted = await cli(store.env, ['bank', 'revert', 'crafted', '20260102T000000-token1', '--yes', '--json']);
    assert.equal(reverted.exitCode, 0, reverted.stderr);
    const text = (await store.storage.get('crafted/bank/decisions.md'))?.body.toString('utf8') ?? '';
    assert.ok(!text.includes(TOKEN), text);
    assert.match(text, /deploy with \[redacted: [^\]]+\]/);
    assert.ok(JSON.parse(reverted.stdout).redacted?.length > 0, reverted.stdout);
  });

  for (const [rid, why, refusal] of [
    ['20260102T000001-nested', 'a file in a folder', /revision 20260102T000001-nested names "sub\/nested\.md", which is no bank file: nothing was reverted/],
    ['20260102T000002-notmd1', 'a file without .md', /revision 20260102T000002-notmd1 names "notes\.txt", which is no bank file: nothing was reverted/],
    [
      '20260102T000003-rules1',
      'rules past the limit',
      /revision 20260102T000003-rules1 cannot be reverted: rules have \d+ characters; the limit is 200000; nothing was reverted/,
    ],
  ] as const) {
    it(`refuses to put back ${why}, changing nothing`, async () => {
      if (rid.endsWith('rules1')) {
        // Revertible but for its size: the rules are at the version the record says it left.
        const key = `crafted/history/${rid}/record.json`;
        const record = JSON.parse((await store.storage.get(key))?.body.toString('utf8') ?? '{}');
        record.revision.rules.version_after = contentVersion((await store.storage.get('crafted/_rules.md'))?.body.toString('utf8') ?? '');
        await store.storage.put(key, JSON.stringify(record));
      }
      const before = await bank();
      const reverted = await cli(store.env, ['bank', 'revert', 'crafted', rid, '--yes']);
      assert.notEqual(reverted.exitCode, 0, reverted.stdout);
      assert.match(reverted.stderr, refusal);
      assert.deepEqual(await bank(), before);
      assert.equal(await store.storage.get('crafted/bank/sub/nested.md'), null);
    });
  }
});
