import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstIndex } from '../../src/shared/bisect.js';

describe('firstIndex', () => {
  it('finds where a sorted range starts to reach a bound, at every position and none', () => {
    const sorted = [1, 3, 3, 5, 8, 13];
    for (let bound = 0; bound <= 14; bound++) {
      const expected = sorted.findIndex((value) => value >= bound);
      assert.equal(
        firstIndex(sorted.length, (i) => (sorted[i] as number) >= bound),
        expected === -1 ? sorted.length : expected,
        `bound ${bound}`,
      );
    }
    assert.equal(
      firstIndex(0, () => true),
      0,
    );
  });
});
