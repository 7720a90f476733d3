#!/usr/bin/env node
// CommonJS on purpose: libuv creates its thread pool the first time it is used, and loading an ES
// module already uses it. Sized here, before anything loads, 16 threads let concurrent fsyncs share
// journal commits (imports and pipelined notes run about three times faster than with the default 4).
process.env.UV_THREADPOOL_SIZE ??= '16';
const path = require('node:path');
const main = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
// A checkout that was never built has no dist/: one line saying so, not a module-not-found stack.
if (!require('node:fs').existsSync(main)) {
  process.stderr.write(`live-mem: not built: run \`npm install\` (or \`npm run build\`) in ${path.resolve(__dirname, '..')}\n`);
  process.exit(2);
}
import(require('node:url').pathToFileURL(main).href);
