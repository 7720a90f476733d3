import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchAnchors } from '../../scripts/bench-anchors.js';
import { removeTempHomes } from '../../scripts/bench-lib.js';

/**
 * Section 28 of the benchmark (scripts/bench-anchors.ts) at a tiny size: a real git repository of 200
 * files, every anchor captured and checked, and every figure it prints a finite number.
 */
describe('the benchmark section of anchors', () => {
  it('runs at a tiny size: every figure a finite number', { timeout: 120_000 }, async () => {
    const figures = await benchAnchors({ files: 200, rounds: 2, notes: 5 }).finally(removeTempHomes);
    assert.equal(figures.length, 6);
    for (const figure of figures) assert.ok(Number.isFinite(figure.value) && (figure.value ?? -1) >= 0, `${figure.key} = ${figure.value}`);
  });
});
