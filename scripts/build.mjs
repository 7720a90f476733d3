// Compiles src/ to dist/ with the project's TypeScript. Used by `npm run build` and `prepare`.
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
process.exitCode = status ?? 1;
