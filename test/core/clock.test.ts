/**
 * One clock (STYLE.md, "no module state"): the core reads the time of day from `context.clock` and
 * measures durations on `context.monotonic`, both injected (core.ts defines the defaults), so a test or
 * a shell that sets them is obeyed everywhere — a token is not `expired` in one answer and `active` in
 * the next because one path read the machine's clock.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createCore } from '../../src/core/core.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';

const CORE = fileURLToPath(new URL('../../src/core', import.meta.url));

/** Where the machine's clocks may be read: the defaults' one definition. */
const ALLOWED = [
  'core.ts', // the clock's own definition (createContext)
];

/** Reads of the machine's clocks: `Date.now`, `new Date()` without an argument, `performance.now`. */
const CLOCK_READ = /\bDate\.now\b|\bnew Date\(\s*\)|\bperformance\.now\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

describe('one clock', () => {
  it('the core reads no clock of the machine outside its definition', () => {
    const breaches = sourceFiles(CORE)
      .map((file) => path.relative(CORE, file).split(path.sep).join('/'))
      .filter((file) => !ALLOWED.some((allowed) => (allowed.endsWith('/') ? file.startsWith(allowed) : file === allowed)))
      .flatMap((file) =>
        readFileSync(path.join(CORE, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (CLOCK_READ.test(line) ? [`src/core/${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    assert.deepEqual(breaches, [], 'read context.clock() (time of day) or context.monotonic() (durations) instead');
  });

  it('the checker sees each form of a clock read, and not a date made from a value', () => {
    for (const line of ['const t = Date.now();', 'const d = new Date();', 'const s = performance.now();', 'const now = options.now ?? Date.now;'])
      assert.ok(CLOCK_READ.test(line), line);
    for (const line of ['new Date(now)', 'Date.parse(at)', 'context.clock()', 'new Date(0)']) assert.ok(!CLOCK_READ.test(line), line);
  });

  it('health measures uptime and the model check’s reuse on the injected monotonic clock', async () => {
    const llm = await startScriptedLlm([{ reply: '{}' }]);
    try {
      let ms = 5_000;
      const core = createCore({ storage: createMemoryDriver(), llm: llm.client(), monotonic: () => ms });
      assert.equal((await core.health(owner)).uptime_seconds, 0);
      ms += 59_000;
      const cached = await core.health(owner);
      assert.equal(cached.uptime_seconds, 59);
      assert.equal(cached.services.llm.cached, true);
      assert.equal(llm.modelListings, 1);
      ms += 2_000;
      const fresh = await core.health(owner);
      assert.equal(fresh.uptime_seconds, 61);
      assert.equal(fresh.services.llm.cached, undefined);
      assert.equal(llm.modelListings, 2, 'checked again once a minute has passed on the injected clock');
    } finally {
      await llm.close();
    }
  });
});
