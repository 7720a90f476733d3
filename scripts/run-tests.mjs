// Runs the test suite: every test/**/*.test.ts (or the files given), through tsx on node:test.
// Node 20 has no test globs, so the list is built here, and an empty list is a failure, not a pass.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

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

console.error(`run-tests: ${files.length} test files`);
const { status } = spawnSync(process.execPath, ['--test', '--import', 'tsx', '--test-concurrency=2', ...files], { cwd: root, stdio: 'inherit' });
process.exit(status ?? 1);
