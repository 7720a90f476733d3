import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

describe('CLI, run as a process', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  const run = (args: string[], input?: string) =>
    execa(process.execPath, [BIN, ...args], {
      env: { LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell' },
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
      ...(input !== undefined ? { input } : {}),
    });
  const json = async (args: string[], input?: string) => {
    const result = await run([...args, '--json'], input);
    return { ...result, body: JSON.parse(result.stdout) as Record<string, unknown> };
  };

  before(async () => {
    home = await tempDir();
  });
  after(async () => home?.remove());

  it('prints its version and help', async () => {
    const version = await run(['--version']);
    assert.equal(version.exitCode, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    const help = await run(['--help']);
    assert.equal(help.exitCode, 0);
    for (const word of ['space', 'note', 'read', 'search', 'bank']) assert.match(help.stdout, new RegExp(`\\b${word}\\b`));
    const sub = await run(['space', 'create', '--help']);
    assert.match(sub.stdout, /--rules-file/);
  });

  it('creates a space, writes notes (arguments and stdin) and reads them', async () => {
    const rules = path.join(home.dir, 'rules.md');
    await writeFile(rules, '# Rules\n\n- notes.md\n');
    const created = await json(['space', 'create', 'proj', '-d', 'A project', '--rules-file', rules]);
    assert.equal(created.exitCode, 0);
    assert.equal(created.body.status, 'created');
    assert.equal((await run(['note', 'proj', 'first', 'note', '-c', 'decision', '-t', 'a,b'])).exitCode, 0);
    const piped = await json(['note', 'proj', '-'], 'from stdin\nsecond line');
    assert.equal(piped.body.category, 'observation');
    const read = await json(['read', 'proj']);
    assert.deepEqual(
      (read.body.notes as Array<{ content: string }>).map((n) => n.content),
      ['from stdin\nsecond line', 'first note'],
    );
    const text = await run(['read', 'proj', '--category', 'decision']);
    assert.match(text.stdout, /\[decision\] {2}#a #b\nfirst note/);
    const search = await json(['search', 'proj', 'STDIN']);
    assert.equal(search.body.total, 1);
    assert.equal((await run(['space', 'rules', 'proj'])).stdout, '# Rules\n\n- notes.md\n');
    const list = await run(['space', 'list']);
    assert.match(list.stdout, /proj\s+2\s+0\s+shell\s+A project/);
  });

  it('reads the bank', async () => {
    await writeFile(path.join(home.dir, 'proj', 'bank', 'activeContext.md'), '# Active\n\nNow.\n');
    assert.equal((await run(['bank', 'read', 'proj', 'activeContext.md'])).stdout, '# Active\n\nNow.\n');
    const all = await json(['bank', 'read-all', 'proj']);
    assert.equal(all.body.file_count, 1);
    assert.match((await run(['bank', 'list', 'proj'])).stdout, /activeContext\.md\s+15\s+5 \/ 4,000 tokens\s+\d{4}-/);
  });

  it('shows each bank file against its budget, and marks the ones over it', async () => {
    await writeFile(path.join(home.dir, 'proj', 'bank', 'notes.md'), 'n'.repeat(14_700)); // 4,200 tokens
    const list = (await run(['bank', 'list', 'proj'])).stdout;
    assert.match(list, /^filename\s+size\s+tokens\s+last_modified$/m);
    assert.match(list, /^activeContext\.md\s+15\s+5 \/ 4,000 tokens\s+\d{4}-/m);
    assert.match(list, /^notes\.md\s+14700\s+4,200 \/ 4,000 tokens {2}OVER BUDGET\s+\d{4}-/m);
    assert.match(list, /\n\nbank: 4,205 \/ 16,000 tokens\n$/);
    const info = (await run(['space', 'info', 'proj'])).stdout;
    assert.match(
      info,
      /^bank: 2 file\(s\), 14,715 bytes, 4,205 \/ 16,000 tokens\n {2}activeContext\.md {2}5 \/ 4,000 tokens\n {2}notes\.md {10}4,200 \/ 4,000 tokens {2}OVER BUDGET$/m,
    );
    assert.match(info, /^live:\n {2}notes_count: 2$/m, 'the other fields as before');
    const json = JSON.parse((await run(['bank', 'list', 'proj', '--json'])).stdout);
    assert.deepEqual([json.total_tokens, json.budget_tokens, json.over_budget], [4_205, 16_000, false]);
  });

  it('exits 1 on a domain error and 2 on a usage error, with a clear message', async () => {
    const missing = await run(['read', 'ghost']);
    assert.equal(missing.exitCode, 1);
    assert.match(missing.stderr, /space 'ghost' does not exist/);
    const missingJson = await json(['read', 'ghost']);
    assert.equal(missingJson.body.status, 'not_found');
    const badOption = await run(['read', 'proj', '--limit', 'many']);
    assert.equal(badOption.exitCode, 2);
    const badLimit = await run(['read', 'proj', '--limit', '0']);
    assert.equal(badLimit.exitCode, 2);
    assert.match(badLimit.stderr, /limit must be an integer from 1 to 1000/);
    const badCategory = await run(['note', 'proj', 'x', '-c', 'gossip']);
    assert.equal(badCategory.exitCode, 2);
    const noConfirm = await run(['space', 'delete', 'proj']);
    assert.equal(noConfirm.exitCode, 2);
    assert.match(noConfirm.stderr, /run again with --yes/);
    const badConfig = await execa(process.execPath, [BIN, 'space', 'list'], { env: { LIVE_MEM_STORAGE: 'ftp' }, reject: false });
    assert.equal(badConfig.exitCode, 2);
    assert.match(badConfig.stderr, /LIVE_MEM_STORAGE must be one of fs, s3/);
    assert.equal((await run(['read', 'proj'])).exitCode, 0, 'nothing was changed');
  });

  it('updates and deletes a space', async () => {
    assert.equal((await json(['space', 'update', 'proj', '--owner', 'team'])).body.owner, 'team');
    const deleted = await json(['space', 'delete', 'proj', '--yes']);
    assert.equal(deleted.body.status, 'deleted');
    assert.equal((await run(['space', 'info', 'proj'])).exitCode, 1);
  });
});
