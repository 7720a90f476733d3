/**
 * The Node.js versions live-mem runs on (issue 34), on the built binary: a supported line starts
 * quietly, another says so in one line and goes on, an older one is refused; the AWS SDK's notice
 * about Node 20 never reaches an MCP client's stderr (doctor says it, once); doctor judges the
 * runtime as shared/runtime.ts does.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { NODE_LINES, runtimeState } from '../../src/shared/runtime.js';
import { BIN } from '../helpers/mcp-client.js';
import { requireS3OrSkip } from '../helpers/s3.js';
import { fsStore, s3Store, type Store } from '../helpers/stores.js';
import { tempDir } from '../helpers/tmp.js';

/** Run with `process.version` made to read `version` (a preload), as a person with that Node.js would. */
const PRELOAD = `const v = process.env.FAKE_NODE_VERSION;
Object.defineProperty(process, 'version', { value: 'v' + v });
Object.defineProperty(process, 'versions', { value: { ...process.versions, node: v } });
`;

describe('shared/runtime.ts: what a Node.js version is to live-mem', () => {
  it('knows the lines CI tests, and when each line ends', () => {
    assert.deepEqual(
      NODE_LINES.map((line) => line.major),
      [20, 22, 24],
    );
    assert.deepEqual(runtimeState('20.20.2', '2026-04-29'), { version: '20.20.2', supported: true });
    assert.deepEqual(runtimeState('20.20.2', '2026-04-30'), { version: '20.20.2', supported: true, pastEndOfLife: '2026-04-30' });
    assert.deepEqual(runtimeState('22.23.3', '2026-11-28'), { version: '22.23.3', supported: true });
    assert.deepEqual(runtimeState('23.1.0', '2026-11-28'), { version: '23.1.0', supported: false });
  });
});

describe('the binary on each Node.js version', () => {
  let store: Store;
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  let preload: string;
  const cli = (args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) =>
    execa(process.execPath, [...nodeArgs, BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: scratch.dir, LIVE_MEM_LOG_LEVEL: 'warn', ...store.env, ...env },
      extendEnv: false,
      reject: false,
    });
  const as = (version: string) => ({ env: { FAKE_NODE_VERSION: version }, node: ['--require', preload] });

  before(async () => {
    store = await fsStore();
    scratch = await tempDir();
    preload = path.join(scratch.dir, 'fake-version.cjs');
    await writeFile(preload, PRELOAD);
  });
  after(async () => {
    await store?.remove();
    await scratch?.remove();
  });

  it('starts quietly on a supported line', async () => {
    for (const major of [20, 22, 24]) {
      const { env, node } = as(`${major}.1.0`);
      const run = await cli(['version'], env, node);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(run.stderr, '', `Node ${major}`);
    }
  });

  it('says in one line that another version is untested, and goes on', async () => {
    for (const version of ['23.1.0', '26.2.0']) {
      const { env, node } = as(version);
      const run = await cli(['note', 'rt', 'noted on an untested Node.js'], env, node);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(run.stderr, `live-mem: Node.js v${version} is not a supported version (20, 22 or 24): it may work, but it is not tested`);
    }
  });

  it('refuses a version older than the oldest line, in one line, exit 2', async () => {
    const { env, node } = as('18.20.4');
    const run = await cli(['note', 'rt', 'never written'], env, node);
    assert.equal(run.exitCode, 2);
    assert.equal(run.stderr, 'live-mem: Node.js v18.20.4 is too old: live-mem needs Node.js 20, 22 or 24 (the maintained LTS lines)');
    assert.equal(run.stdout, '');
  });

  it("doctor judges this process's Node.js, once, with what to do", async () => {
    const run = await cli(['doctor', '--json']);
    const finding = (JSON.parse(run.stdout) as { findings: Array<{ check: string; status: string; message: string; hint?: string }> }).findings.find(
      (f) => f.check === 'runtime',
    );
    const state = runtimeState(process.versions.node, new Date().toISOString().slice(0, 10));
    assert.ok(finding, run.stdout);
    assert.equal(finding.status, state.pastEndOfLife || !state.supported ? 'warn' : 'ok');
    if (state.pastEndOfLife) {
      assert.match(finding.message, new RegExp(`reached end of life on ${state.pastEndOfLife}`));
      assert.match(finding.hint ?? '', /move to Node\.js 22 or 24/);
    }
  });
});

describe('the AWS SDK on Node.js 20', () => {
  const s3 = requireS3OrSkip('the AWS SDK notice');
  if (!s3) return;
  let store: Store;
  before(async () => {
    store = await s3Store(s3);
  });
  after(async () => store?.remove());

  it("prints no notice of its own to a client's stderr: a note and a read on S3 leave stderr empty", async () => {
    const env = { PATH: process.env.PATH ?? '', LIVE_MEM_LOG_LEVEL: 'warn', ...store.env };
    for (const args of [
      ['note', 'rt', 'a note on S3'],
      ['read', 'rt'],
    ]) {
      const run = await execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(run.stderr, '', args.join(' '));
    }
  });
});
