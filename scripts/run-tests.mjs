// Runs the test suite: every test/**/*.test.ts (or the files given), through tsx on node:test.
// Node 20 has no test globs, so the list is built here, and an empty list is a failure, not a pass.
//
// LIVE_MEM_TEST_NODES (paths of other node binaries, separated by ':') runs the whole suite on each of
// them as well, at the same time as on this node (CI: Node 20, 22 and 24); each run's output is
// printed whole once it ends, under a header naming its version. A test file that says
// `run-tests: alone` (one that pauses the radosgw every other file uses) runs after the others, on
// each node in turn, with nothing else running.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return findTests(full);
    return entry.name.endsWith('.test.ts') ? [path.relative(root, full)] : [];
  });
}

const files = process.argv.length > 2 ? process.argv.slice(2) : findTests(path.join(root, 'test')).sort();
if (files.length === 0) {
  console.error('run-tests: no test files found under test/');
  process.exit(1);
}
// tsx runs the tests without type checking: check src, test and scripts first.
const scratch = mkdtempSync(path.join(tmpdir(), 'live-mem-tsc-'));
const tsconfig = path.join(scratch, 'tsconfig.json');
writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: path.join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, rootDir: root, typeRoots: [path.join(root, 'node_modules/@types')] },
    include: ['src', 'test', 'scripts/*.ts'].map((p) => path.join(root, p)),
  }),
);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const typecheck = spawnSync(process.execPath, [tsc, '-p', tsconfig], { cwd: root, stdio: 'inherit' });
rmSync(scratch, { recursive: true, force: true });
// The web viewer's page has its own tsconfig (DOM types, no Node).
const webcheck = typecheck.status === 0 ? spawnSync(process.execPath, [tsc, '-p', 'src/ui/web/tsconfig.json'], { cwd: root, stdio: 'inherit' }) : typecheck;
if (typecheck.status !== 0 || webcheck.status !== 0) {
  console.error('run-tests: type errors (above)');
  process.exit(1);
}

const alone = files.filter((file) => readFileSync(path.join(root, file), 'utf8').includes('run-tests: alone'));
const together = files.filter((file) => !alone.includes(file));
const nodes = [process.execPath, ...(process.env.LIVE_MEM_TEST_NODES ?? '').split(':').filter(Boolean)];

/** `node --test` of `list` on `node`, with that node first on PATH (tests that run `node` or npm get it too). */
function run(node, list, output) {
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  // Off a terminal, TAP whatever the node (Node 24 writes its `spec` report to files and pipes too): one format to read and grep.
  const reporter = output === 'inherit' && process.stdout.isTTY ? [] : ['--test-reporter=tap'];
  const child = spawn(node, ['--test', ...reporter, '--import', 'tsx', '--test-concurrency=2', ...list], { cwd: root, env, stdio: ['ignore', output, output] });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

const versionOf = (node) => spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();

console.error(`run-tests: ${files.length} test files${nodes.length > 1 ? ` on ${nodes.map(versionOf).join(', ')}` : ''}`);
let failed = false;
if (nodes.length === 1) {
  if (together.length > 0) failed ||= (await run(process.execPath, together, 'inherit')) !== 0;
} else {
  // One log per node, printed whole once every run has ended: TAP streams interleaved would be unreadable.
  const logs = mkdtempSync(path.join(tmpdir(), 'live-mem-tests-'));
  const runs = nodes.map(async (node, i) => {
    const file = path.join(logs, `${i}.tap`);
    const fd = openSync(file, 'w');
    try {
      return { node, file, status: together.length > 0 ? await run(node, together, fd) : 0 };
    } finally {
      closeSync(fd);
    }
  });
  for (const { node, file, status } of await Promise.all(runs)) {
    process.stdout.write(`\n# ===== ${versionOf(node)} (${node}): ${status === 0 ? 'passed' : 'FAILED'}\n`);
    process.stdout.write(readFileSync(file));
    failed ||= status !== 0;
  }
  rmSync(logs, { recursive: true, force: true });
}
for (const node of alone.length > 0 ? nodes : []) {
  if (nodes.length > 1) process.stdout.write(`\n# ===== ${versionOf(node)}: files that run alone\n`);
  failed ||= (await run(node, alone, 'inherit')) !== 0;
}
// Not process.exit(): the logs written above may still be on their way into a pipe (CI's tee).
process.exitCode = failed ? 1 : 0;
