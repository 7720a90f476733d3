/**
 * The small things a new user meets in the CLI's first hour (issue 20), as processes: help and
 * version as people type them, suggestions, prompts on a terminal, errors with their hint, output
 * that reads well, files not overwritten, settings not silently ignored.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { FIRST_PLAN, scenarios } from '../../fixtures/llm/scenarios.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type Step } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

describe('CLI: the first hour', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell', ...extra });
  const run = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) =>
    execa(process.execPath, [BIN, ...args], {
      cwd: home.dir,
      env: env(options.env),
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  /** Runs the CLI with stdin (and stdout) on a pseudo-terminal, stderr into a file; the terminal closes at once (EOF). */
  const onTerminal = async (args: string[]) => {
    const errFile = path.join(home.dir, `stderr-${args.join('-')}.txt`);
    const command = `${[process.execPath, BIN, ...args].map(quote).join(' ')} 2> ${quote(errFile)}`;
    const result = await execa('script', ['-qec', command, '/dev/null'], { env: env(), extendEnv: false, reject: false, input: '' });
    return { exitCode: result.exitCode, terminal: result.stdout, stderr: await readFile(errFile, 'utf8') };
  };

  before(async () => {
    home = await tempDir();
    for (const id of ['my-project-2', 'my-project', 'my-proj']) assert.equal((await run(['space', 'create', id])).exitCode, 0);
    assert.equal((await run(['note', 'my-project', 'first note'])).exitCode, 0);
  });
  after(async () => home?.remove());

  it("the quick start's commands as pasted: the first note makes its space and says so, the read shows it", async () => {
    const first = await run(['note', 'demo', 'Hello from the quick start']);
    assert.equal(first.exitCode, 0, first.stderr);
    assert.match(first.stdout, /^created: \d{8}T\d{6}_shell_observation_\w{8}\.md\n\(new space 'demo' created with the default rules\)\n$/);
    const second = await run(['note', 'demo', 'again']);
    assert.doesNotMatch(second.stdout, /new space/, 'only the note that made the space says so');
    const read = await run(['read', 'demo']);
    assert.equal(read.exitCode, 0, read.stderr);
    assert.match(read.stdout, /Hello from the quick start/);
  });

  it('help, version and -v as people type them; a mistyped command gets a suggestion', async () => {
    const help = await run(['help']);
    assert.equal(help.exitCode, 0, help.stderr);
    assert.equal(help.stdout, (await run(['--help'])).stdout);
    const noteHelp = await run(['help', 'note']);
    assert.equal(noteHelp.exitCode, 0, noteHelp.stderr);
    assert.equal(noteHelp.stdout, (await run(['note', '--help'])).stdout);
    for (const spelling of [['version'], ['-v'], ['-V'], ['--version']]) {
      const version = await run(spelling);
      assert.equal(version.exitCode, 0, `${spelling}: ${version.stderr}`);
      assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    }
    const typo = await run(['spce', 'list']);
    assert.equal(typo.exitCode, 2);
    assert.equal(typo.stderr, "live-mem: unknown command 'spce' (did you mean 'space'?) (see `live-mem --help`)\n");
    const far = await run(['frobnicate']);
    assert.equal(far.stderr, "live-mem: unknown command 'frobnicate' (see `live-mem --help`)\n");
  });

  it("a command's help: its own options and an example, the global options only at the top", async () => {
    const top = await run(['--help']);
    assert.match(top.stdout, /--token-file <file>/);
    for (const args of [['note'], ['read'], ['search'], ['consolidate'], ['export'], ['import'], ['token', 'create']]) {
      const sub = await run([...args, '--help']);
      assert.equal(sub.exitCode, 0);
      assert.doesNotMatch(sub.stdout, /--token-file|--storage <driver>/, `${args.join(' ')}: no global option listed`);
      assert.match(sub.stdout, /Global options .*: see `live-mem --help`/);
      assert.match(sub.stdout, new RegExp(`Example:\\n {2}\\$ live-mem ${args.join(' ')} `), `${args.join(' ')}: an example`);
    }
  });

  it('consolidate: --only-agent is the filter, apart from the global --agent (the signer)', async () => {
    const help = await run(['consolidate', '--help']);
    assert.match(help.stdout, /--only-agent <name>/);
    const options = help.stdout.split('Example:')[0] ?? '';
    assert.equal(options.match(/--agent\b/g), null, 'the filter is no longer listed as --agent');
    const llm = await startScriptedLlm([{ reply: FIRST_PLAN }, { reply: FIRST_PLAN }]);
    try {
      const model = { LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'm', LIVE_MEM_LLM_API_KEY: 'k', LIVE_MEM_SUMMARIES: 'off' };
      await run(['space', 'create', 'filtered']);
      await run(['note', 'filtered', 'by ann', '--as', 'ann']);
      await run(['note', 'filtered', 'by bob', '--as', 'bob']);
      const only = await run(['consolidate', 'filtered', '--only-agent', 'nobody', '--json'], { env: model });
      assert.equal(JSON.parse(only.stdout).notes_processed, 0, only.stdout);
      const ann = await run(['consolidate', 'filtered', '--only-agent', 'ann', '--json'], { env: model });
      assert.equal(JSON.parse(ann.stdout).notes_processed, 1, ann.stdout);
      assert.equal(JSON.parse((await run(['read', 'filtered', '--json'])).stdout).notes[0].agent, 'bob');
    } finally {
      await llm.close();
    }
  });

  it('consolidate prints its figures once, and a failure its message once (with the hint)', async () => {
    for (const [steps, failed] of [
      [[{ reply: FIRST_PLAN }], false],
      [scenarios.invalidTwice, true],
    ] as const) {
      const llm = await startScriptedLlm([...steps] as Step[]);
      try {
        await run(['space', 'create', `c${Number(failed)}`]);
        await run(['note', `c${Number(failed)}`, 'a note']);
        const model = { LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'm', LIVE_MEM_LLM_API_KEY: 'k', LIVE_MEM_SUMMARIES: 'off' };
        const result = await run(['consolidate', `c${Number(failed)}`], { env: model });
        const both = result.stdout + result.stderr;
        assert.equal(result.exitCode, failed ? 1 : 0, both);
        assert.equal(both.match(/llm_tokens_used/g)?.length, 1, both);
        assert.equal(both.match(/notes_remaining/g)?.length, 1, both);
        if (failed) {
          assert.equal(both.match(/no usable plan twice/g)?.length, 1, both);
          assert.match(result.stderr, /^live-mem: the model returned no usable plan twice[^\n]*\n {2}hint: [^\n]+\n$/m);
        }
      } finally {
        await llm.close();
      }
    }
  });

  it('summaries update renders its levels, not [object Object]', async () => {
    const result = await run(['summaries', 'update', 'my-project', '--dry-run']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /object Object/);
    assert.match(result.stdout, /^levels:\n {2}- level 1, summaries \d+, /m);
  });

  it('errors carry the hint MCP gives, worded for the shell; confirmations name --yes', async () => {
    const missing = await run(['read', 'ghost']);
    assert.equal(missing.exitCode, 1);
    assert.equal(
      missing.stderr,
      "live-mem: space 'ghost' does not exist\n  hint: The space does not exist: create it with `live-mem space create ghost`, or check the name with `live-mem space list`.\n",
    );
    const asJson = JSON.parse((await run(['read', 'ghost', '--json'])).stdout);
    assert.equal(asJson.hint, 'The space does not exist: create it with `live-mem space create ghost`, or check the name with `live-mem space list`.');
    const unconfirmed = await run(['space', 'delete', 'my-proj']);
    assert.equal(unconfirmed.exitCode, 2);
    assert.equal(unconfirmed.stderr, "live-mem: deleting space 'my-proj' erases all its notes and bank: run again with --yes\n");
    const created = JSON.parse((await run(['backup', 'create', 'my-proj', '--json'])).stdout);
    const restore = await run(['backup', 'restore', created.backup_id]);
    assert.match(restore.stderr, /recreates space 'my-proj': run again with --yes\n$/);
    const onto = await run(['backup', 'restore', created.backup_id, '--yes']);
    assert.equal(onto.exitCode, 1);
    assert.match(onto.stderr, /^live-mem: space 'my-proj' exists: delete it first, or restore the backup as a new space with --as <new_space_id>\n/);
    assert.doesNotMatch(onto.stderr, /as=/);
  });

  it('spaces are listed with a prefix first (my-project before my-project-2)', async () => {
    const list = JSON.parse((await run(['space', 'list', '--json'])).stdout);
    const ids = (list.spaces as Array<{ space_id: string }>).map((space) => space.space_id).filter((id) => id.startsWith('my-'));
    assert.deepEqual(ids, ['my-proj', 'my-project', 'my-project-2']);
  });

  it('export refuses to overwrite a file unless --force', async () => {
    const archive = path.join(home.dir, 'out.tar.gz');
    await writeFile(archive, 'precious');
    const refused = await run(['export', 'my-project', '-o', archive]);
    assert.equal(refused.exitCode, 2);
    assert.equal(refused.stderr, `live-mem: ${archive} already exists: give another --output, or --force to replace it\n`);
    assert.equal(await readFile(archive, 'utf8'), 'precious');
    const forced = await run(['export', 'my-project', '-o', archive, '--force', '--json']);
    assert.equal(forced.exitCode, 0, forced.stderr);
    assert.notEqual(await readFile(archive, 'utf8'), 'precious');
    const fresh = path.join(home.dir, 'fresh.tar.gz');
    assert.equal((await run(['export', 'my-project', '-o', fresh])).exitCode, 0);
  });

  it('a token for a space that does not exist is created, with a warning', async () => {
    const created = JSON.parse((await run(['token', 'create', 'early', '-p', 'read', '-s', 'my-project,not-yet', '--json'])).stdout);
    assert.equal(created.status, 'created');
    assert.deepEqual(created.warnings, ["space 'not-yet' does not exist (yet): the token will reach it once it is created; check the id if it should exist"]);
    const all = JSON.parse((await run(['token', 'create', 'everywhere', '-p', 'read', '-s', 'my-project', '--json'])).stdout);
    assert.equal(all.warnings, undefined);
  });

  it('timestamps in results have one format: ISO 8601 at the second, as notes and spaces have', async () => {
    // After the consolidation test above: c0 has bank files and a consolidation in its history.
    await run(['space', 'update', 'c0', '-d', 'updated']);
    await run(['backup', 'create', 'c0']);
    await run(['token', 'create', 'dated', '-p', 'read', '-s', 'c0', '--expires-in-days', '3']);
    await run(['token', 'revoke', 'dated']);
    const stamps: Array<[string, string]> = [];
    const collect = (value: unknown, where: string): void => {
      if (Array.isArray(value)) value.forEach((item, i) => collect(item, `${where}[${i}]`));
      else if (value !== null && typeof value === 'object')
        for (const [key, inner] of Object.entries(value)) {
          if (typeof inner === 'string' && /(_at|^timestamp|last_modified|last_consolidation)$/.test(key)) stamps.push([`${where}.${key}`, inner]);
          else collect(inner, `${where}.${key}`);
        }
    };
    for (const args of [
      ['space', 'info', 'c0'],
      ['read', 'c0'],
      ['bank', 'list', 'c0'],
      ['history', 'list', 'c0'],
      ['backup', 'list', 'c0'],
      ['token', 'list'],
    ]) {
      const result = await run([...args, '--json']);
      assert.equal(result.exitCode, 0, result.stderr);
      collect(JSON.parse(result.stdout), args.join(' '));
    }
    for (const kind of [
      'space info c0.created_at',
      'bank list c0.files[0].last_modified',
      'history list c0.consolidations[0].committed_at',
      'backup list c0.backups[0].created_at',
    ])
      assert.ok(
        stamps.some(([where]) => where === kind),
        `${kind} among ${stamps.map(([where]) => where).join(', ')}`,
      );
    for (const kind of ['expires_at', 'revoked_at'])
      assert.ok(
        stamps.some(([where]) => where.endsWith(kind)),
        kind,
      );
    for (const [where, stamp] of stamps) assert.match(stamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, where);
  });

  it('an unknown key in live-mem.yaml is refused, with the nearest valid key', async () => {
    const config = path.join(home.dir, 'typo.yaml');
    await writeFile(config, 'agnet: x\n');
    const result = await run(['--config', config, 'space', 'list']);
    assert.equal(result.exitCode, 2);
    assert.equal(result.stderr, `live-mem: unknown setting 'agnet' in ${config} (did you mean 'agent'?)\n`);
    await writeFile(config, 'llm:\n  modle: x\n');
    assert.match((await run(['--config', config, 'space', 'list'])).stderr, /unknown setting 'llm\.modle' .*\(did you mean 'llm\.model'\?\)/);
    await writeFile(config, 'agent: yaml-agent\nllm:\n  context_window: 40000\n');
    assert.equal((await run(['--config', config, 'space', 'list'])).exitCode, 0);
  });

  it('note reading standard input: a prompt on a terminal, none on a pipe', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
    const terminal = await onTerminal(['note', 'my-project']);
    assert.match(terminal.stderr, /^live-mem: type the note, then Ctrl-D/);
    const piped = await run(['note', 'my-project'], { input: 'piped note' });
    assert.equal(piped.exitCode, 0);
    assert.equal(piped.stderr, '');
  });

  it('live-mem alone on a terminal says it is serving MCP; a client (a pipe) gets nothing of it', {
    skip: !hasScript && 'util-linux script is not installed',
  }, async () => {
    const terminal = await onTerminal([]);
    assert.match(terminal.stderr, /^live-mem: serving MCP on stdio — this is what MCP clients run; see live-mem --help\n/);
    assert.doesNotMatch(terminal.terminal, /serving MCP/, 'stdout stays the protocol');
    const piped = await run([], { input: '', env: { LIVE_MEM_LOG_LEVEL: 'warn' } });
    assert.equal(piped.stderr, '');
    assert.equal(piped.stdout, '');
  });

  it('a checkout that was never built says so in one line (exit 2), not with a module-not-found stack', async () => {
    const checkout = await tempDir();
    try {
      const bin = path.join(checkout.dir, 'bin', 'live-mem.cjs');
      await mkdir(path.dirname(bin));
      await copyFile(BIN, bin);
      const result = await execa(process.execPath, [bin, 'space', 'list'], { reject: false });
      assert.equal(result.exitCode, 2);
      assert.equal(result.stderr, `live-mem: not built: run \`npm install\` (or \`npm run build\`) in ${checkout.dir}`);
    } finally {
      await checkout.remove();
    }
  });
});
