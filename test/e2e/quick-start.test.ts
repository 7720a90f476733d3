/**
 * README's quick start, run as a newcomer runs it: every command of its `sh` blocks, in a copy of this
 * checkout as git tracks it (a fresh clone: no node_modules, no dist/, but with the changes not yet
 * committed), with a scratch HOME and npm prefix, then what it prints compared with the output README
 * shows, line by line (times, dates, names and ids aside), the builds counted (one) and npm's warnings
 * (none).
 *
 * One block is left out: `bash .ci/run`, CI's own entry point, which runs this suite (and this test) on
 * every submission and so cannot run inside it.
 *
 * npm runs offline, from the npm cache of the user running the tests. `npm ci` in this checkout (CI's
 * first step, and every developer's) has put every package of the lock file there, so the test needs no
 * network, cannot hang on or be flaked by a registry, and installs exactly the lock — what CI tests. A
 * cache missing a package fails `npm ci` with ENOTCACHED: run `npm ci` in the checkout first. (The packed
 * tarball's own install, with no registry at all, is test/e2e/install.test.ts.) It takes about a minute:
 * `npm ci` builds live-mem, as the quick start says.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/package.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);

/** The `sh` and `text` blocks of README's "Quick start" section. */
async function quickStart(): Promise<{ commands: string[]; skipped: string[]; output: string[] }> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Quick start\n'));
  assert.ok(section, 'README has a "## Quick start" section');
  const blocks = (language: string) => [...section.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => String(m[1]));
  const sh = blocks('sh');
  return {
    commands: sh.filter((block) => block.trim() !== 'bash .ci/run'),
    skipped: sh.filter((block) => block.trim() === 'bash .ci/run'),
    output: blocks('text'),
  };
}

/**
 * A line of README's sample output as a pattern: any number for its numbers, any duration for npm's
 * (`in 46s`, `in 2m`, `in 850ms`), any agent for `root`, any note id.
 */
function linePattern(sample: string): RegExp {
  const escaped = sample
    .replace(/_[a-z0-9]{8}\.md$/, '\u0000')
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/ in \d+(?:\\\.\d+)?(?:ms|s|m)$/, ' in \u0001')
    .replace(/\d+/g, '\\d+')
    .replace('\u0001', '[\\d.]+(?:ms|s|m|h)')
    .replace(/root/g, '[^\\s_]+')
    .replace('\u0000', '_[a-z0-9]{8}\\.md');
  return new RegExp(`^${escaped}$`);
}

/** Copies the files git tracks (and new ones it does not ignore) as they are in the work tree. */
async function copyCheckout(to: string): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  for (const file of new Set(stdout.split('\0').filter(Boolean))) {
    const from = path.join(ROOT, file);
    const stat = await lstat(from).catch(() => undefined);
    if (!stat?.isFile()) continue; // deleted in the work tree, not yet in git's index
    await mkdir(path.dirname(path.join(to, file)), { recursive: true });
    await copyFile(from, path.join(to, file));
  }
}

describe("README's quick start", () => {
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  let checkout: string;
  let home: string;
  let prefix: string;
  let cache: string;

  before(async () => {
    scratch = await tempDir('live-mem-quick-start');
    checkout = path.join(scratch.dir, 'live-mem');
    home = path.join(scratch.dir, 'home');
    prefix = path.join(home, '.local');
    await mkdir(prefix, { recursive: true });
    await copyCheckout(checkout);
    // The cache npm uses for the person running the tests (under `npm test`, the one npm exported).
    cache = (await run('npm', ['config', 'get', 'cache'], { cwd: ROOT })).stdout.trim();
  });
  after(() => scratch.remove());

  it('runs every command, builds once, warns of nothing, and prints what README shows', { timeout: 10 * 60_000 }, async () => {
    const { commands, skipped, output } = await quickStart();
    assert.ok(commands.length > 0, 'the quick start has commands');
    assert.equal(skipped.length, 1, 'the quick start names `bash .ci/run` once');
    assert.equal(output.length, 1, 'the quick start shows what it prints, once');

    // A newcomer's environment: no npm settings of ours, no live-mem settings, a home of their own.
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !/^(npm_|LIVE_MEM_)/i.test(key)) env[key] = value;
    }
    Object.assign(env, {
      HOME: home,
      PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), process.env.PATH ?? ''].join(path.delimiter),
      npm_config_prefix: prefix,
      npm_config_cache: cache,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    });
    // Between two commands, the build's identity (dist/ is removed and written anew by each build): a
    // build npm runs with its output hidden (as `npm install -g .` runs `prepare`) is counted too.
    const builds = path.join(scratch.dir, 'builds');
    const probe = `stat -c '%i %y' '${path.join(checkout, 'dist', 'cli', 'main.js')}' >> '${builds}' 2>/dev/null || echo none >> '${builds}'`;
    const lines = commands
      .join('\n')
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
      // One command a line, so a build hidden inside any of them is seen (`a && b` under `set -e` is `a`, then `b`).
      .flatMap((line) => line.split(' && '));
    const script = ['exec 2>&1', 'set -euo pipefail', probe, ...lines.flatMap((line) => [line, probe])].join('\n');
    const result = await run('bash', ['-c', script], { cwd: checkout, env, maxBuffer: 64 * 1024 * 1024 }).catch((error: { code: number; stdout: string }) =>
      assert.fail(`the quick start failed (exit ${error.code}):\n${error.stdout}`),
    );
    const printed = result.stdout;

    const states = (await readFile(builds, 'utf8')).trim().split('\n');
    const built = states.filter((state, index) => index > 0 && state !== 'none' && state !== states[index - 1]).length;
    assert.equal(built, 1, `live-mem built ${built} times:\n${printed}`);
    assert.doesNotMatch(printed, /^npm (warn|WARN|error|ERR)/m, `npm warns or errs:\n${printed}`);
    // Every line README shows, in its order.
    const printedLines = printed.split('\n');
    let at = 0;
    const samples = String(output[0])
      .split('\n')
      .filter((line) => line.trim() !== '');
    for (const sample of samples) {
      const pattern = linePattern(sample);
      const found = printedLines.findIndex((line, index) => index >= at && pattern.test(line));
      assert.ok(found >= 0, `README shows "${sample}", not printed (after line ${at}):\n${printed}`);
      at = found + 1;
    }
    // live-mem on the PATH is a link to the checkout, and the note is in the newcomer's home.
    assert.equal(await realpath(path.join(prefix, 'lib', 'node_modules', 'live-mem')), await realpath(checkout));
    assert.equal(await realpath(path.join(prefix, 'bin', 'live-mem')), await realpath(path.join(checkout, 'bin', 'live-mem.cjs')));
    assert.equal((await readdir(path.join(home, '.live-mem', 'demo', 'live'))).filter((name) => name.endsWith('.md')).length, 1);
  });
});
