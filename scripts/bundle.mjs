// `npm run bundle`: the Claude Desktop bundle (an MCP Bundle, .mcpb), packed by the official `mcpb` tool
// (@anthropic-ai/mcpb). Run after `npm run build` (`npm run bundle` runs both). The bundle holds
// clients/claude-desktop/manifest.json, a package.json (name, version, `"type": "module"` for dist/'s
// ES modules), bin/live-mem.cjs and the built dist/cli/ and dist/chunks/: esbuild already put every
// dependency in there, so the bundle needs no node_modules. The licences of that bundled code travel
// as THIRD-PARTY-LICENSES.txt, their versions as BUNDLED-DEPENDENCIES.json (both written by the build). Left out: the library entry and its types, the
// web viewer (`live-mem ui` is not a Claude Desktop tool) and the optional peers (the AWS SDK for S3,
// local embeddings), which an install adds beside live-mem and a bundle cannot.
//
//   node scripts/bundle.mjs [--out <file.mcpb>]     default: live-mem-<version>.mcpb here
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BUNDLED, NOTICES } from './licenses.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const fail = (message) => {
  process.stderr.write(`live-mem bundle: ${message}\n`);
  process.exit(1);
};

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const manifestFile = path.join(root, 'clients', 'claude-desktop', 'manifest.json');
const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
if (manifest.version !== pkg.version) fail(`${manifestFile} says version ${manifest.version}, package.json ${pkg.version}: make them the same`);
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = path.resolve(values.out ?? path.join(root, `${pkg.name}-${pkg.version}.mcpb`));
for (const built of ['dist/cli/main.js', 'dist/chunks', NOTICES, BUNDLED]) {
  if (!existsSync(path.join(root, built))) fail(`${built} is missing: run \`npm run build\` first (\`npm run bundle\` does both)`);
}

const stage = mkdtempSync(path.join(tmpdir(), 'live-mem-bundle-'));
try {
  copyFileSync(manifestFile, path.join(stage, 'manifest.json'));
  const { name, version, description, license, author, repository, homepage, engines } = pkg;
  const trimmed = { name, version, description, type: 'module', license, author, repository, homepage, engines };
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(trimmed, null, 2)}\n`);
  mkdirSync(path.join(stage, 'bin'));
  copyFileSync(path.join(root, 'bin', 'live-mem.cjs'), path.join(stage, 'bin', 'live-mem.cjs'));
  for (const folder of ['dist/cli', 'dist/chunks']) cpSync(path.join(root, folder), path.join(stage, folder), { recursive: true });
  copyFileSync(path.join(root, NOTICES), path.join(stage, 'THIRD-PARTY-LICENSES.txt'));
  copyFileSync(path.join(root, BUNDLED), path.join(stage, 'BUNDLED-DEPENDENCIES.json'));
  copyFileSync(path.join(root, 'LICENSE'), path.join(stage, 'LICENSE'));

  // The official CLI, as `mcpb pack <folder> <file>`: it validates the manifest, then zips the folder.
  const mcpb = path.join(path.dirname(createRequire(import.meta.url).resolve('@anthropic-ai/mcpb')), 'cli', 'cli.js');
  mkdirSync(path.dirname(out), { recursive: true });
  const packed = spawnSync(process.execPath, [mcpb, 'pack', stage, out], { encoding: 'utf8' });
  if (packed.status !== 0) fail(`mcpb pack failed:\n${packed.stdout}${packed.stderr}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
const bytes = readFileSync(out);
const sha256 = createHash('sha256').update(bytes).digest('hex');
const shown = path.relative(process.cwd(), out);
process.stderr.write(`live-mem bundle: ${shown.startsWith('..') ? out : shown} (${(bytes.length / 1024).toFixed(0)} KiB, sha256 ${sha256})\n`);
