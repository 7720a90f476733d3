import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { erasFigures, measureEras, SERVERS } from '../../scripts/bench-eras.js';

/**
 * Section 27 of the benchmark (scripts/bench-eras.ts) at a tiny size, on the build's bin/ (`npm test`
 * builds first): each server answers every call, live-mem in both eras (the section refuses a client
 * that did not get the era it asked for), and every figure it prints can be computed.
 */
describe('the benchmark section of the two MCP eras over HTTP', () => {
  it('runs at a tiny size: every call answered in both eras, every figure a finite number', { timeout: 120_000 }, async () => {
    const size = { clients: 3, rounds: 2, runMs: 250, warmMs: 100 };
    const runs = await measureEras(size);
    for (const name of SERVERS) {
      assert.equal(runs[name].length, size.rounds, name);
      for (const run of runs[name]) {
        assert.equal(run.failed, 0, `${name}: calls failed`);
        assert.ok(run.calls > 0 && run.latencies.length === run.calls, `${name}: ${run.calls} calls`);
      }
    }
    const figures = erasFigures(runs, size);
    assert.equal(figures.length, SERVERS.length * 4 + 4);
    for (const figure of figures) assert.ok(Number.isFinite(figure.value), `${figure.key} = ${figure.value}`);
  });
});
