import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuseScores, rescaleCosines } from '../../../src/core/recall/fusion.js';

const ids = (fused: Array<{ id: string }>) => fused.map((hit) => hit.id);
const close = (actual: number | undefined, expected: number) => assert.ok(Math.abs((actual ?? Number.NaN) - expected) < 1e-12, `${actual} ≠ ${expected}`);
const hits = (...pairs: Array<[string, number]>) => pairs.map(([id, score]) => ({ id, score }));

describe('score fusion', () => {
  it('adds (1 − weight) × lexical / its best and weight × semantic / its best, best first', () => {
    const fused = fuseScores(hits(['a', 10], ['b', 5]), hits(['b', 0.9], ['c', 0.45]), 0.2);
    assert.deepEqual(ids(fused), ['a', 'b', 'c']);
    close(fused[0]?.score, 0.8);
    close(fused[1]?.score, 0.8 * 0.5 + 0.2);
    close(fused[2]?.score, 0.2 * 0.5);
  });

  it('weight 0 is BM25 alone, in its order; weight 1 the cosine ranking alone', () => {
    const lexical = hits(['a', 3], ['b', 2], ['c', 1]);
    const semantic = hits(['c', 1], ['d', 0.5]);
    assert.deepEqual(ids(fuseScores(lexical, semantic, 0)).slice(0, 3), ['a', 'b', 'c']);
    assert.deepEqual(ids(fuseScores(lexical, semantic, 1)).slice(0, 2), ['c', 'd']);
  });

  it('keeps a strong BM25 head in the top 5 whatever a weak, misleading cosine ranking says', () => {
    // BM25 is sure of five documents; the cosine ranking puts eight others first and those five last.
    const lexical = hits(['a', 9], ['b', 8.5], ['c', 8], ['d', 7.5], ['e', 7], ['f', 2], ['g', 1.5]);
    const decoys = Array.from({ length: 8 }, (_, i): [string, number] => [`x${i}`, 1 - i * 0.01]);
    const semantic = hits(...decoys, ['f', 0.2], ['a', 0.05], ['b', 0.04], ['c', 0.03], ['d', 0.02], ['e', 0.01]);
    assert.deepEqual(
      ids(fuseScores(lexical, semantic, 0.2))
        .slice(0, 5)
        .sort(),
      ['a', 'b', 'c', 'd', 'e'],
    );
  });

  it('breaks ties by first appearance, the lexical list first', () => {
    assert.deepEqual(ids(fuseScores(hits(['p', 1]), hits(['q', 1]), 0.5)), ['p', 'q']);
  });

  it('answers nothing for empty lists, and refuses a weight outside 0–1', () => {
    assert.deepEqual(fuseScores([], [], 0.2), []);
    assert.deepEqual(ids(fuseScores([], hits(['only', 0.3]), 0.2)), ['only']);
    assert.throws(() => fuseScores([], [], 1.5), RangeError);
    assert.throws(() => fuseScores([], [], Number.NaN), RangeError);
  });
});

describe('cosines rescaled', () => {
  it('maps the reference hits onto [0, 1] and clamps the rest', () => {
    const rescaled = rescaleCosines(hits(['m:sum', 0.95], ['n:a', 0.9], ['n:b', 0.8], ['n:c', 0.7], ['b:x', 0.5]), (id) => id.startsWith('n:'));
    assert.deepEqual(
      rescaled.map((hit) => [hit.id, Math.round(hit.score * 1000) / 1000]),
      [
        ['m:sum', 1],
        ['n:a', 1],
        ['n:b', 0.5],
        ['n:c', 0],
        ['b:x', 0],
      ],
    );
  });

  it('takes every hit as reference when none is one, and scores 1 when all are equal', () => {
    assert.deepEqual(ids(rescaleCosines(hits(['b:x', -0.2], ['b:y', -0.4]), () => false)), ['b:x', 'b:y']);
    assert.equal(rescaleCosines(hits(['b:x', -0.2], ['b:y', -0.4]), () => false)[0]?.score, 1);
    assert.equal(rescaleCosines(hits(['n:a', 0.3]), () => true)[0]?.score, 1);
  });
});
