import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchAnchors } from '../../scripts/bench-anchors.js';
import { removeTempHomes } from '../../scripts/bench-lib.js';

/**
 * Section 28 of the benchmark (scripts/bench-anchors.ts) at a tiny size: a real git repository of 200
 * files, every anchor captured and checked, a space of its anchored notes searched and given as context
 * with and without the reader's checkout, and every figure it prints a finite number.
 */
describe('the benchmark section of anchors', () => {
  it('runs at a tiny size: every figure a finite number', { timeout: 120_000 }, async () => {
    const figures = await benchAnchors({ files: 200, rounds: 2, notes: 5 }).finally(removeTempHomes);
    assert.equal(figures.length, 14);
    for (const figure of figures) {
      // What the checks add is a difference of two timings: noise may make it a little below zero, never a non-number.
      const least = figure.key.includes('_added_') ? -50 : 0;
      assert.ok(Number.isFinite(figure.value) && (figure.value ?? -Infinity) >= least, `${figure.key} = ${figure.value}`);
    }
  });
});
