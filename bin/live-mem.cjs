#!/usr/bin/env node
// CommonJS on purpose: libuv creates its thread pool the first time it is used, and loading an ES
// module already uses it. Sized here, before anything loads, 16 threads let concurrent fsyncs share
// journal commits (imports and pipelined notes run about three times faster than with the default 4).
process.env.UV_THREADPOOL_SIZE ??= '16';
import('../dist/cli/main.js');
