// Builds dist/: tsc compiles src/ (the library entry and its types), then esbuild bundles the CLI
// into dist/cli/ so that start-up loads a handful of files instead of ~400 modules (about half the
// start-up time). The MCP server and the S3 driver stay in chunks of their own, loaded when used;
// the AWS SDK is never bundled (it is large and loaded only for s3). Last, the web viewer's page is
// type-checked against the DOM and bundled for the browser into dist/ui/public/ (served by `live-mem ui`).
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
rmSync(`${root}dist`, { recursive: true, force: true });

const tsc = require.resolve('typescript/bin/tsc');
const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
if (status !== 0) process.exit(status ?? 1);

rmSync(`${root}dist/cli`, { recursive: true, force: true });
await build({
  entryPoints: [`${root}src/cli/main.ts`],
  outdir: `${root}dist/cli`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['@aws-sdk/*'],
  // Bundled CommonJS dependencies call require(); give them one.
  banner: { js: "import { createRequire as __liveMemRequire } from 'node:module'; const require = __liveMemRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning',
});

// The web viewer: its own tsconfig (DOM types; src/ui/web is left out of the Node build above).
const web = spawnSync(process.execPath, [tsc, '-p', 'src/ui/web/tsconfig.json'], { cwd: root, stdio: 'inherit' });
if (web.status !== 0) process.exit(web.status ?? 1);
const publicDir = `${root}dist/ui/public`;
mkdirSync(publicDir, { recursive: true });
await build({
  entryPoints: [`${root}src/ui/web/main.ts`],
  outfile: `${publicDir}/app.js`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) copyFileSync(`${root}src/ui/web/${file}`, `${publicDir}/${file}`);
