#!/usr/bin/env node
// CommonJS on purpose: libuv creates its thread pool the first time it is used, and loading an ES
// module already uses it. Sized here, before anything loads, 16 threads let concurrent fsyncs share
// journal commits (imports and pipelined notes run about three times faster than with the default 4).
process.env.UV_THREADPOOL_SIZE ??= '16';
// On Node 20 the AWS SDK prints, as its S3 client is made, that its releases after January 2027 need
// Node 22: onto an MCP client's stderr, where nobody can act on it (`live-mem doctor` says once that
// Node 20 is past its end of life). The SDK takes that setting from the environment only, no client
// option: a process-wide setting, so the process's entry sets it, not the driver (a library's host
// keeps its own say).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The Node.js lines live-mem is built and tested on (package.json `engines`, README "Node.js versions").
// Older ones lack what its dependencies use: refused. Others (an odd release, a line newer than CI
// covers) may well work: one line says so, on stderr (stdout is the protocol), and it goes on.
const SUPPORTED = [20, 22, 24];
const major = Number(process.versions.node.split('.')[0]);
if (major < SUPPORTED[0]) {
  process.stderr.write(
    `live-mem: Node.js ${process.version} is too old: live-mem needs Node.js ${SUPPORTED.slice(0, -1).join(', ')} or ${SUPPORTED.at(-1)} (the maintained LTS lines)\n`,
  );
  process.exit(2);
}
if (!SUPPORTED.includes(major)) {
  process.stderr.write(
    `live-mem: Node.js ${process.version} is not a supported version (${SUPPORTED.slice(0, -1).join(', ')} or ${SUPPORTED.at(-1)}): it may work, but it is not tested\n`,
  );
}
const path = require('node:path');
const main = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
// A checkout that was never built has no dist/: one line saying so, not a module-not-found stack.
if (!require('node:fs').existsSync(main)) {
  process.stderr.write(`live-mem: not built: run \`npm install\` (or \`npm run build\`) in ${path.resolve(__dirname, '..')}\n`);
  process.exit(2);
}
// Node 22.1 and later keep V8's compiled code of the bundle on disk (in os.tmpdir(), checked against
// the files' contents, NODE_DISABLE_COMPILE_CACHE=1 turns it off): a launch then parses ~3 MB of
// JavaScript once per release, not once per process (a CLI call's CPU 0.14 → 0.10 s). Node 20 has
// no such cache; a cache that cannot be written is skipped silently.
require('node:module').enableCompileCache?.();
import(require('node:url').pathToFileURL(main).href);
