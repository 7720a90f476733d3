// Builds dist/, saying what it does (one line per step on stderr, shown by `npm install`'s prepare):
//  1. tsc writes the library's declarations (dist/types/, only what src/index.ts reaches: no
//     internals, no types of packages an install does not have);
//  2. esbuild bundles the CLI (dist/cli/main.js) and the library (dist/index.js) in one splitting
//     build: they share chunks (dist/chunks/), every dependency is inside, so an install needs none
//     of them. Start-up loads a handful of files instead of ~400 modules; the MCP server and the S3
//     driver stay in chunks of their own, loaded when used. The AWS SDK is never bundled: it is an
//     optional peer dependency, imported only by the S3 driver;
//  3. the web viewer's page is type-checked against the DOM and bundled for the browser into
//     dist/ui/public/ (served by `live-mem ui`);
//  4. the licences of every package bundled in steps 2 and 3 go into dist/THIRD-PARTY-LICENSES.txt,
//     their exact versions into dist/BUNDLED-DEPENDENCIES.json (scripts/licenses.mjs): the package
//     ships their code, so it ships their licences, and a list a user can audit.
// No source maps: nothing in the package points to a file it does not ship.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { writeBundleRecords } from './licenses.mjs';

const started = performance.now();
const step = (what) => process.stderr.write(`live-mem build: ${what}\n`);
const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const tsc = require.resolve('typescript/bin/tsc');
const run = (args) => {
  const { status } = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
};
rmSync(`${root}dist`, { recursive: true, force: true });

step('writing the library declarations…');
run(['-p', 'tsconfig.build.json']);

step('bundling the CLI and the library…');
const node = await build({
  entryPoints: { 'cli/main': `${root}src/cli/main.ts`, index: `${root}src/index.ts` },
  outdir: `${root}dist`,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Optional peer dependencies, imported only when their setting is set (S3; local embeddings).
  external: ['@aws-sdk/*', '@huggingface/transformers'],
  // Bundled CommonJS dependencies call require(); give them one.
  banner: { js: "import { createRequire as __liveMemRequire } from 'node:module'; const require = __liveMemRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
});

// The web viewer: its own tsconfig (DOM types; src/ui/web is left out of the Node build above).
step('type-checking and bundling the web viewer…');
run(['-p', 'src/ui/web/tsconfig.json']);
const publicDir = `${root}dist/ui/public`;
mkdirSync(publicDir, { recursive: true });
const web = await build({
  entryPoints: [`${root}src/ui/web/main.ts`],
  outfile: `${publicDir}/app.js`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  metafile: true,
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) copyFileSync(`${root}src/ui/web/${file}`, `${publicDir}/${file}`);
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
step(`licences and versions of the ${writeBundleRecords(root, [node.metafile, web.metafile], version).length} bundled packages…`);
step(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
