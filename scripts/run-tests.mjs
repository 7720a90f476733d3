// Runs the test suite: every test/**/*.test.ts (or the files given) on node:test, type-checked by tsc
// first. Node 20 has no test globs, so the list is built here, and an empty list is a failure, not a pass.
//
// The TypeScript is compiled once, by esbuild, into a mirror of the repository in a temporary folder
// (a copy of src, test, scripts and fixtures, each .ts compiled beside itself; every other entry a link), and the
// tests run there on plain node: tsx's loader cost each test process ~0.8 s of CPU, a fifth of the
// suite's. Source maps keep failures pointing at the .ts lines.
//
// LIVE_MEM_TEST_NODES (paths of other node binaries, separated by ':') runs the whole suite on each of
// them as well, at the same time as on this node (CI: Node 20, 22 and 24); each run's output is
// printed whole once it ends, under a header naming its version. A test file that says
// `run-tests: alone` (one that pauses the radosgw every other file uses) runs after the others, on
// each node in turn, with nothing else running.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
// Each phase's time, on stderr: where a CI run's minutes go.
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
// esbuild compiles the tests without type checking: check src, test and scripts first.
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

/**
 * The mirror the tests run in: a copy of `src`, `test`, `scripts` and `fixtures`, each .ts compiled beside
 * itself; the repository's other entries linked whole. Paths a test derives from its own location (the
 * repository's root, fixtures, dist, README) land on the same content. Copies, not links, of those
 * folders' files: a test copying a fixture folder (fs.cp keeps links as links) must get files it may change.
 */
function compileTests() {
  const tree = mkdtempSync(path.join(tmpdir(), 'live-mem-test-build-'));
  const compiled = ['src', 'test', 'scripts', 'fixtures'];
  for (const entry of readdirSync(root)) if (!compiled.includes(entry)) symlinkSync(path.join(root, entry), path.join(tree, entry));
  const sources = [];
  const mirror = (relative) => {
    mkdirSync(path.join(tree, relative), { recursive: true });
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const file = path.join(relative, entry.name);
      if (entry.isDirectory()) mirror(file);
      else {
        copyFileSync(path.join(root, file), path.join(tree, file));
        if (file.endsWith('.ts') && !file.endsWith('.d.ts')) sources.push(path.join(root, file));
      }
    }
  };
  for (const dir of compiled) mirror(dir);
  const esbuild = createRequire(import.meta.url)('esbuild');
  esbuild.buildSync({
    entryPoints: sources,
    outbase: root,
    outdir: tree,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
  });
  return tree;
}

console.error(`run-tests: type-checked at ${elapsed()}`);
const tree = compileTests();
console.error(`run-tests: compiled at ${elapsed()}`);
process.on('exit', () => rmSync(tree, { recursive: true, force: true }));
const built = (file) => path.join(tree, file.replace(/\.ts$/, '.js'));

const alone = files.filter((file) => readFileSync(path.join(root, file), 'utf8').includes('run-tests: alone'));
const together = files.filter((file) => !alone.includes(file));
const nodes = [process.execPath, ...(process.env.LIVE_MEM_TEST_NODES ?? '').split(':').filter(Boolean)];

/** `node --test` of `list` on `node`, with that node first on PATH (tests that run `node` or npm get it too). */
function run(node, list, output) {
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  // Off a terminal, TAP whatever the node (Node 24 writes its `spec` report to files and pipes too): one format to read and grep.
  const reporter = output === 'inherit' && process.stdout.isTTY ? [] : ['--test-reporter=tap'];
  const child = spawn(node, ['--test', ...reporter, '--enable-source-maps', '--test-concurrency=2', ...list.map(built)], {
    cwd: root,
    env,
    stdio: ['ignore', output, output],
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

const versionOf = (node) => spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();

/** The failed tests of a TAP log, innermost first line of each error under its test, indented as nested. */
function failuresIn(log) {
  const lines = log.split('\n');
  const out = [];
  lines.forEach((line, i) => {
    if (!/^\s*not ok \d+ - /.test(line)) return;
    out.push(`  ${line}`);
    const at = lines.slice(i + 1, i + 12).findIndex((next) => /^\s*error: /.test(next));
    if (at === -1) return;
    // A long message is a YAML block (`error: |-`): its first line is the next one.
    const error = lines[i + 1 + at].trim();
    const first = /^error: [|>]-?$/.test(error) ? `error: ${(lines[i + 2 + at] ?? '').trim()}` : error;
    out.push(`    ${first.slice(0, 300)}`);
  });
  return out.length > 0 ? out.join('\n') : '  (no test failed: the run itself did — see its log above)';
}

const failures = [];
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
      const status = together.length > 0 ? await run(node, together, fd) : 0;
      console.error(`run-tests: ${versionOf(node)} ended at ${elapsed()}`);
      return { node, file, status };
    } finally {
      closeSync(fd);
    }
  });
  for (const { node, file, status } of await Promise.all(runs)) {
    const log = readFileSync(file, 'utf8');
    process.stdout.write(`\n# ===== ${versionOf(node)} (${node}): ${status === 0 ? 'passed' : 'FAILED'}\n`);
    process.stdout.write(log);
    if (status !== 0) failures.push(`${versionOf(node)}:\n${failuresIn(log)}`);
    failed = failed || status !== 0;
  }
  rmSync(logs, { recursive: true, force: true });
}
// Every node runs the files that run alone, whatever failed before: one failure must not hide another.
for (const node of alone.length > 0 ? nodes : []) {
  if (nodes.length > 1) process.stdout.write(`\n# ===== ${versionOf(node)}: files that run alone\n`);
  const status = await run(node, alone, 'inherit');
  console.error(`run-tests: ${versionOf(node)}'s files that run alone ended at ${elapsed()}`);
  if (status !== 0) failures.push(`${versionOf(node)}, files that run alone: ${alone.join(', ')}`);
  failed = failed || status !== 0;
}
// Last, where a CI log's tail shows it: what failed, test by test, with its error's first line.
if (failures.length > 0) process.stdout.write(`\n# ===== failed\n${failures.join('\n')}\n`);
// Not process.exit(): the logs written above may still be on their way into a pipe (CI's tee).
process.exitCode = failed ? 1 : 0;
