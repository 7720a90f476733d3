/**
 * The progress display of the built binary: one line rewritten in place on a terminal (run under a
 * pseudo-terminal with util-linux `script`), nothing when stderr is a pipe or with -q.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

describe('progress display', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let llm: ScriptedLlm;
  let env: Record<string, string>;

  /** Runs the CLI with stderr on a pseudo-terminal, stdout into a file: what a person at a terminal sees on stderr. */
  const onTerminal = async (args: string[], out: string) => {
    const command = `${[process.execPath, BIN, ...args].map(quote).join(' ')} > ${quote(out)}`;
    const run = await execa('script', ['-qec', command, '/dev/null'], { env, extendEnv: false, reject: false, input: '' });
    return { exitCode: run.exitCode, terminal: run.stdout, stdout: await readFile(out, 'utf8') };
  };

  before(async () => {
    home = await tempDir();
    // Slow enough for the progress line to be drawn (it waits 250 ms before its first draw).
    llm = await startScriptedLlm([{ delayMs: 700, then: { reply: FIRST_PLAN } }]);
    env = {
      PATH: process.env.PATH ?? '',
      LIVE_MEM_HOME: home.dir,
      LIVE_MEM_LOG_LEVEL: 'warn',
      LIVE_MEM_SUMMARIES: 'off',
      LIVE_MEM_LLM_BASE_URL: llm.url,
      LIVE_MEM_LLM_MODEL: 'scripted-model',
      LIVE_MEM_LLM_API_KEY: 'k',
    };
    const core = createCore({ storage: createFsDriver(home.dir) });
    const owner = ownerCaller('tester');
    for (const space of ['a', 'b', 'c']) {
      await core.spaces.create(owner, { space_id: space });
      for (let i = 0; i < 4; i++) await core.notes.write(owner, { space_id: space, category: 'progress', content: `note ${i}` });
    }
  });
  after(async () => {
    await llm?.close();
    await home?.remove();
  });

  it('on a terminal: one line rewritten in place, erased before the result', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
    const run = await onTerminal(['consolidate', 'a', '--json'], path.join(home.dir, 'out.json'));
    assert.equal(run.exitCode, 0, run.terminal);
    assert.equal(JSON.parse(run.stdout).status, 'ok', 'the result on stdout, untouched');
    assert.match(run.terminal, /\r\x1b\[Kconsolidate a \d+% · window 1: asking scripted-model/);
    assert.ok(run.terminal.endsWith('\r\x1b[K'), `erased at the end: ${JSON.stringify(run.terminal.slice(-80))}`);
    assert.doesNotMatch(run.terminal, /\n./, 'never more than one line');
  });

  it('on a terminal with -q: nothing', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
    const run = await onTerminal(['consolidate', 'b', '-q', '--json'], path.join(home.dir, 'out-q.json'));
    assert.equal(run.exitCode, 0, run.terminal);
    assert.equal(JSON.parse(run.stdout).status, 'ok');
    assert.equal(run.terminal, '');
  });

  it('on a pipe: nothing, for consolidation, export, import and search alike', async () => {
    const cli = (args: string[]) => execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false, cwd: home.dir });
    for (const args of [
      ['consolidate', 'c'],
      ['export', 'a', '-o', 'a.tar.gz'],
      ['import', 'a.tar.gz', '--as', 'a2'],
      ['recall', 'a2', 'note'],
      ['doctor', '--fix'],
    ]) {
      const run = await cli(args);
      assert.equal(run.exitCode, 0, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stderr, '', args.join(' '));
    }
  });
});
