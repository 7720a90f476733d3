import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuseRankings } from '../../../src/core/recall/fusion.js';

const ids = (fused: Array<{ id: string }>) => fused.map((hit) => hit.id);
const close = (actual: number | undefined, expected: number) => assert.ok(Math.abs((actual ?? Number.NaN) - expected) < 1e-12, `${actual} ≠ ${expected}`);

describe('reciprocal rank fusion', () => {
  it('sums 1 / (k + rank) over the rankings, rank from 1, best first', () => {
    const fused = fuseRankings([
      ['a', 'b', 'c'],
      ['c', 'b', 'd'],
    ]);
    assert.deepEqual(ids(fused), ['c', 'b', 'a', 'd']);
    close(fused[0]?.score, 1 / 63 + 1 / 61);
    close(fused[1]?.score, 2 / 62);
    close(fused[2]?.score, 1 / 61);
    close(fused[3]?.score, 1 / 63);
  });

  it('lets agreement between rankings beat one ranking’s favourite', () => {
    assert.deepEqual(
      ids(
        fuseRankings([
          ['solo', 'shared'],
          ['other', 'shared'],
        ]),
      ).slice(0, 1),
      ['shared'],
    );
  });

  it('takes k: a small k gives the top ranks more weight', () => {
    const rankings = [
      ['x', 'y'],
      ['w', 'v', 'u', 'y'],
    ];
    assert.equal(fuseRankings(rankings)[0]?.id, 'y');
    const sharp = fuseRankings(rankings, 0);
    close(sharp.find((hit) => hit.id === 'y')?.score, 1 / 2 + 1 / 4);
    assert.deepEqual(ids(sharp).slice(0, 3), ['x', 'w', 'y']);
  });

  it('breaks ties by first appearance, reading the rankings in order', () => {
    assert.deepEqual(
      ids(
        fuseRankings([
          ['p', 'q'],
          ['r', 's'],
        ]),
      ),
      ['p', 'r', 'q', 's'],
    );
    assert.deepEqual(
      ids(
        fuseRankings([
          ['b', 'a'],
          ['a', 'b'],
        ]),
      ),
      ['b', 'a'],
    );
  });

  it('counts an id listed twice in one ranking once, at its best rank', () => {
    const fused = fuseRankings([['a', 'b', 'a']]);
    assert.deepEqual(ids(fused), ['a', 'b']);
    close(fused[0]?.score, 1 / 61);
  });

  it('answers nothing for no rankings or empty ones, and refuses a negative k', () => {
    assert.deepEqual(fuseRankings([]), []);
    assert.deepEqual(fuseRankings([[], []]), []);
    assert.deepEqual(ids(fuseRankings([[], ['only']])), ['only']);
    assert.throws(() => fuseRankings([['a']], -1), RangeError);
  });
});
