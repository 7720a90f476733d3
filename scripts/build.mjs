// Builds dist/: tsc compiles src/ (the library entry and its types), then esbuild bundles the CLI
// into dist/cli/ so that start-up loads a handful of files instead of ~400 modules (about half the
// start-up time). The MCP server and the S3 driver stay in chunks of their own, loaded when used;
// the AWS SDK is never bundled (it is large and loaded only for s3).
import { rmSync } from 'node:fs';
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
