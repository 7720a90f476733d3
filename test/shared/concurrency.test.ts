import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedTasks, coalescing, mapLimit, mapOrdered } from '../../src/shared/concurrency.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('concurrency helpers', () => {
  it('mapLimit keeps the order and never exceeds the limit', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([5, 4, 3, 2, 1], 2, async (n) => {
      peak = Math.max(peak, ++running);
      await tick();
      running--;
      return n * 10;
    });
    assert.deepEqual(out, [50, 40, 30, 20, 10]);
    assert.equal(peak, 2);
  });

  it('mapOrdered yields in order and surfaces a failure at its turn', async () => {
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const n of mapOrdered([1, 2, 3], 3, async (n) => (n === 3 ? Promise.reject(new Error('three')) : n))) seen.push(n);
    }, /three/);
    assert.deepEqual(seen, [1, 2]);
  });

  it('boundedTasks throws the first failure at the next run or at drain', async () => {
    const tasks = boundedTasks(2);
    await tasks.run(async () => {
      throw new Error('first');
    });
    await tick();
    await assert.rejects(
      tasks.run(async () => undefined),
      /first/,
    );
    await assert.rejects(tasks.drain(), /first/);
  });

  it('coalescing shares one run among callers that arrive while another runs, never an older one', async () => {
    const started: number[] = [];
    let release: () => void = () => undefined;
    const sync = coalescing(async () => {
      started.push(started.length);
      await new Promise<void>((resolve) => (release = resolve));
    });
    const first = sync('dir');
    await tick();
    // Arrive while the first run is in flight: all three share the second run, which starts after it.
    const later = [sync('dir'), sync('dir'), sync('dir')];
    assert.equal(started.length, 1);
    release();
    await first;
    await tick();
    assert.equal(started.length, 2, 'one more run for the three of them');
    release();
    await Promise.all(later);
    // Another key runs on its own; a failure reaches the callers that shared that run only.
    const failing = coalescing(async (key) => {
      if (key === 'bad') throw new Error('EIO');
    });
    await assert.rejects(failing('bad'), /EIO/);
    await failing('good');
    await failing('bad').catch(() => undefined);
  });
});
