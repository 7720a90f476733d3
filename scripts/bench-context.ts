/**
 * Section 17 of `npm run bench`: the "newest N" paths on big spaces, in-process on fs, as a new
 * process meets them (a new core: nothing cached) and warm: memory_context (no query, 4,000 tokens)
 * and live_read (limit 50) on 10,000 live notes and on 100,000 notes (195 consolidations of 500 in
 * history, 2,500 live), seeded as section 9 seeds them. Cold: the median of 5 new cores; warm: p50
 * of 20 calls on one.
 */
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { below, figure, freshHome, percentile, progress, timeMs, type Figure } from './bench-lib.js';
import { seedSynthetic } from './bench-recall.js';
import { syntheticNotes, vocabulary } from './bench-text.js';

const SPACES = [
  { label: '10,000', key: '10k', plan: { spaceId: 'ctx-10k', consolidations: 0, perConsolidation: 0 }, notes: 10_000 },
  { label: '100,000', key: '100k', plan: { spaceId: 'ctx-100k', consolidations: 195, perConsolidation: 500 }, notes: 100_000 },
] as const;
const COLD_RUNS = 5;
const WARM_CALLS = 20;
const TARGET_CONTEXT_P50_MS = 50;

export async function benchContext(): Promise<Figure[]> {
  const home = await freshHome('context');
  const words = vocabulary();
  const seedMs = await timeMs(async () => {
    for (const [i, space] of SPACES.entries()) await seedSynthetic(home, space.plan, syntheticNotes(space.notes, 20 + i, words));
  });
  progress(`  seeded 10,000 and 100,000 notes in ${(seedMs / 1000).toFixed(1)} s`);
  const caller = ownerCaller('bench');
  const figures: Figure[] = [];
  for (const space of SPACES) {
    const calls = {
      context: (core: ReturnType<typeof createCore>) => core.recall.context(caller, { space_id: space.plan.spaceId }),
      read: (core: ReturnType<typeof createCore>) => core.notes.read(caller, { space_id: space.plan.spaceId, limit: 50 }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const cold: number[] = [];
      for (let run = 0; run < COLD_RUNS; run++) cold.push(await timeMs(() => call(createCore({ storage: createFsDriver(home) }))));
      const core = createCore({ storage: createFsDriver(home) });
      await call(core);
      const warm: number[] = [];
      for (let i = 0; i < WARM_CALLS; i++) warm.push(await timeMs(() => call(core)));
      const tool = name === 'context' ? 'memory_context' : 'live_read';
      const target = name === 'context' ? below(TARGET_CONTEXT_P50_MS) : undefined;
      figures.push(
        figure(`${tool}_cold_${space.key}_ms`, `${tool}, new process, ${space.label} notes (median of ${COLD_RUNS})`, percentile(cold, 50), 'ms', target),
        figure(`${tool}_warm_${space.key}_p50_ms`, `${tool} p50, warm, ${space.label} notes`, percentile(warm, 50), 'ms', target),
      );
    }
  }
  return figures;
}
