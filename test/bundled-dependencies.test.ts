/**
 * What the package says it bundles, against what its build read and wrote (scripts/licenses.mjs).
 * esbuild copies the dependencies' code into dist/, so the package must carry their licences
 * (THIRD-PARTY-LICENSES.txt) and a list of their exact versions a user can audit
 * (BUNDLED-DEPENDENCIES.json). Both are checked here against two witnesses read independently of
 * the script that writes them: the builds' inputs (esbuild's metafiles, kept as dist/bundle-inputs.json)
 * and the path comment esbuild writes above every module it copies into the Node build's JavaScript.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { npmEnv, ROOT } from './helpers/package.js';

const DIST = path.join(ROOT, 'dist');
const read = (file: string): string => readFileSync(path.join(DIST, file), 'utf8');

/** The folder of the npm package a file belongs to (the one after its last node_modules/), if any. */
function packageFolder(file: string): string | undefined {
  const at = file.lastIndexOf('node_modules/');
  if (at === -1) return undefined;
  const [scope, name] = file.slice(at + 'node_modules/'.length).split('/');
  return `${file.slice(0, at)}node_modules/${scope?.startsWith('@') ? `${scope}/${name}` : scope}`;
}

/** `name@version` of each package among `inputs` (paths relative to the checkout), as its package.json says, sorted. */
function packagesAmong(inputs: readonly string[]): string[] {
  const folders = new Set(inputs.map(packageFolder).filter((folder) => folder !== undefined));
  const found = [...folders].map((folder) => {
    const manifest = JSON.parse(readFileSync(path.resolve(ROOT, folder, 'package.json'), 'utf8')) as { name: string; version: string };
    return `${manifest.name}@${manifest.version}`;
  });
  return [...new Set(found)].sort();
}

/** `name@version` of each package THIRD-PARTY-LICENSES.txt gives a licence for (its heading lines), sorted. */
function noticed(): string[] {
  const headings = read('THIRD-PARTY-LICENSES.txt').matchAll(/^={78}\n(\S+) (\S+) \([^)\n]*\)\n={78}$/gm);
  return [...headings].map(([, name, version]) => `${name}@${version}`).sort();
}

/** `name@version` of each dependency of BUNDLED-DEPENDENCIES.json (an npm alias read as the package it names), sorted. */
function audited(): string[] {
  const { dependencies } = JSON.parse(read('BUNDLED-DEPENDENCIES.json')) as { dependencies: Record<string, string> };
  return Object.entries(dependencies)
    .map(([name, spec]) => (spec.startsWith('npm:') ? spec.slice('npm:'.length) : `${name}@${spec}`))
    .sort();
}

/** Names of the packages whose modules the Node build's JavaScript carries (esbuild's `// …/node_modules/…` headings). */
function carried(): string[] {
  const files = readdirSync(DIST, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js') && !file.startsWith('ui/'));
  const names = files.flatMap((file) =>
    [...read(file).matchAll(/^\/\/ (\S*node_modules\/\S+)$/gm)].map(([, input]) => {
      const folder = packageFolder(input as string) as string;
      return folder.slice(folder.lastIndexOf('node_modules/') + 'node_modules/'.length);
    }),
  );
  return [...new Set(names)].sort();
}

/** What of `bundled` the list leaves out. */
const missingFrom = (listed: readonly string[], bundled: readonly string[]): string[] => bundled.filter((pkg) => !listed.includes(pkg));

const inputs = (): string[] => (JSON.parse(read('bundle-inputs.json')) as { inputs: string[] }).inputs;

describe('the bundled dependencies, as the package lists them', () => {
  it("gives a licence and an exact version to every package among the builds' inputs, and to nothing else", () => {
    const bundled = packagesAmong(inputs());
    assert.ok(bundled.length >= 10 && bundled.some((pkg) => pkg.startsWith('zod@')), bundled.join(', '));
    assert.deepEqual(noticed(), bundled);
    assert.deepEqual(audited(), bundled);
  });

  it('lists every package whose code the built JavaScript carries', () => {
    const names = carried();
    assert.ok(names.includes('@modelcontextprotocol/server') && names.includes('openai'), names.join(', '));
    const listed = noticed().map((pkg) => pkg.slice(0, pkg.lastIndexOf('@')));
    assert.deepEqual(missingFrom(listed, names), []);
  });

  it('finds a bundled package the lists leave out (an input planted from a package the build never bundles)', () => {
    const planted = packagesAmong([...inputs(), 'node_modules/esbuild/lib/main.js']);
    const esbuild = planted.filter((pkg) => pkg.startsWith('esbuild@'));
    assert.equal(esbuild.length, 1);
    assert.deepEqual(missingFrom(noticed(), planted), esbuild);
    assert.deepEqual(missingFrom(audited(), planted), esbuild);
  });

  it('writes the audit list as a package.json npm reads: private, each dependency at its exact version', () => {
    const manifest = JSON.parse(read('BUNDLED-DEPENDENCIES.json')) as {
      name: string;
      private: boolean;
      description: string;
      dependencies: Record<string, string>;
    };
    assert.equal(manifest.private, true);
    assert.match(manifest.name, /^[a-z][a-z-]*$/);
    assert.match(manifest.description, /npm install --package-lock-only.*npm audit/);
    for (const [name, spec] of Object.entries(manifest.dependencies)) assert.match(spec, /^(npm:\S+@)?\d+\.\d+\.\d+(-[\w.]+)?$/, name);
  });

  it('ships both files and LICENSE in the npm package, and not the inputs', async () => {
    const cache = await mkdtemp(path.join(tmpdir(), 'live-mem-pack-'));
    try {
      const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        env: npmEnv(cache),
        maxBuffer: 64 * 1024 * 1024,
      });
      const [listing] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
      const files = (listing?.files ?? []).map((file) => file.path);
      for (const file of ['LICENSE', 'dist/THIRD-PARTY-LICENSES.txt', 'dist/BUNDLED-DEPENDENCIES.json']) assert.ok(files.includes(file), file);
      assert.ok(!files.includes('dist/bundle-inputs.json'));
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });
});
