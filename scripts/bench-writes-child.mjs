// One round of bench-writes.ts (section 25), in plain JavaScript so that no TypeScript loader hook
// runs beside the measured calls: loads a build's library (its dist/index.js), writes `warmUp` notes
// into a new space on `home`, then `count` more, and prints the CPU time (process.cpuUsage: every
// thread) and wall time a note over those as JSON. Usage: node bench-writes-child.mjs
// <build root> <home> <count> <warm-up> <note args as JSON: categories, content prefix, tags>.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, home, count, warmUp, shape] = process.argv.slice(2);
const { categories, prefix, suffix, tags } = JSON.parse(shape);
const lib = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href);
const core = lib.createCore({ storage: lib.createFsDriver(home) });
const caller = lib.ownerCaller('bench');
await core.spaces.create(caller, { space_id: 'cpu' });
const note = (i) => ({ space_id: 'cpu', category: categories[i % categories.length], content: `${prefix}${i}${suffix}`, tags });
const first = Number(warmUp);
const last = first + Number(count);
for (let i = 0; i < first; i++) await core.notes.write(caller, note(i));
const before = process.cpuUsage();
const start = performance.now();
for (let i = first; i < last; i++) await core.notes.write(caller, note(i));
const wallMs = performance.now() - start;
const used = process.cpuUsage(before);
await core.idle?.();
process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 / Number(count), wallMs: wallMs / Number(count) }));
