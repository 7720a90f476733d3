import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/tmp.js';

/**
 * CI's verdict on the suite's log (scripts/check-test-log.mjs, called by .ci/run), fed logs made of
 * real TAP: node:test's own report of a few tiny test files, under run-tests.mjs's section headers.
 */
const CHECKER = fileURLToPath(new URL('../../scripts/check-test-log.mjs', import.meta.url));
const NODES = ['--node', 'v20', '--node', 'v22.23.3', '--node', 'v24.21.0'];

const FILES: Record<string, string> = {
  'good.test.mjs': `import { describe, it } from 'node:test';
describe('storage conformance: s3', () => { it('puts', () => {}); });
it('computes the reference vectors', () => {});`,
  'other.test.mjs': `import { it } from 'node:test';
it('something else', () => {});`,
  'todo.test.mjs': `import { it } from 'node:test';
it('storage conformance: s3', { todo: 'not yet' }, () => { throw new Error('broken'); });`,
  'skip.test.mjs': `import { it } from 'node:test';
it('computes the reference vectors', { skip: 'no model' }, () => {});`,
};

describe('the CI log checker', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const tap: Record<string, string> = {};
  before(async () => {
    dir = await tempDir('live-mem-ci-log');
    for (const [name, text] of Object.entries(FILES)) await writeFile(path.join(dir.dir, name), text);
    // Without NODE_TEST_CONTEXT, which would make the inner run report to this one instead of in TAP.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    for (const name of Object.keys(FILES)) {
      const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', path.join(dir.dir, name)], { encoding: 'utf8', env });
      tap[name] = run.stdout;
    }
  });
  after(async () => dir?.remove());

  const section = (version: string, body: string, verdict = 'passed') => `\n# ===== ${version} (/opt/node-${version}/bin/node): ${verdict}\n${body}`;
  const check = async (log: string, markers = ['storage conformance: s3', 'computes the reference vectors']) => {
    const file = path.join(dir.dir, 'ci.log');
    await writeFile(file, log);
    const run = spawnSync(process.execPath, [CHECKER, file, ...NODES, ...markers.flatMap((m) => ['--marker', m])], { encoding: 'utf8' });
    return { status: run.status, stderr: run.stderr };
  };

  it('passes a log where every line passed and ran every marker', async () => {
    const good = tap['good.test.mjs'] as string;
    const result = await check(section('v20.19.0', good) + section('v22.23.3', good) + section('v24.21.0', good));
    assert.equal(result.status, 0, result.stderr);
  });

  it('fails when one line did not run a marker, though the log names it more than three times in all', async () => {
    const good = tap['good.test.mjs'] as string;
    const log = section('v20.19.0', good) + section('v22.23.3', good + good) + section('v24.21.0', tap['other.test.mjs'] as string);
    assert.ok(log.split('\n').filter((line) => line.includes('storage conformance: s3')).length >= 3, 'the old count would have passed it');
    const result = await check(log);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /'storage conformance: s3' did not run on Node\.js v24\.21\.0/);
    assert.match(result.stderr, /'computes the reference vectors' did not run on Node\.js v24\.21\.0/);
    assert.doesNotMatch(result.stderr, /v20|v22/);
  });

  it('fails when a line is missing or failed', async () => {
    const good = tap['good.test.mjs'] as string;
    const result = await check(section('v20.19.0', good) + section('v22.23.3', good, 'FAILED'));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /did not pass on Node\.js v22\.23\.3/);
    assert.match(result.stderr, /did not pass on Node\.js v24\.21\.0/);
  });

  it('fails on a todo test that failed, which node:test itself lets pass', async () => {
    const todo = tap['todo.test.mjs'] as string;
    assert.match(todo, /^not ok \d+ - .* # TODO/m, 'node:test reports it as a failed todo');
    const good = tap['good.test.mjs'] as string;
    const result = await check(section('v20.19.0', good + todo) + section('v22.23.3', good) + section('v24.21.0', good));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /a todo test failed/);
  });

  it('fails on a skipped test, and does not count a skipped marker as run', async () => {
    const good = tap['good.test.mjs'] as string;
    const skipped = tap['skip.test.mjs'] as string;
    const result = await check(section('v20.19.0', good) + section('v22.23.3', good) + section('v24.21.0', `${tap['other.test.mjs']}${skipped}`));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /'computes the reference vectors' did not run on Node\.js v24\.21\.0/);
    assert.match(result.stderr, /skipped/);
  });

  it('counts the files that run alone under their own line', async () => {
    const good = tap['good.test.mjs'] as string;
    const other = tap['other.test.mjs'] as string;
    const log = `${section('v20.19.0', good) + section('v22.23.3', good) + section('v24.21.0', other)}\n# ===== v24.21.0: files that run alone\n${good}`;
    const result = await check(log);
    assert.equal(result.status, 0, result.stderr);
  });
});
