import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCallerLimiter } from '../../src/mcp/http-limits.js';

describe('per-caller HTTP limits', () => {
  it('refills the rate bucket with time, and a refused request costs nothing', () => {
    let now = 0;
    const limiter = createCallerLimiter({ maxConnections: 10, maxInFlight: 10, ratePerMinute: 2 }, () => now);
    const admit = () => limiter.admit('token:a');
    for (let i = 0; i < 2; i++) {
      const ok = admit();
      assert.ok(ok.admitted);
      ok.release();
    }
    const refused = admit();
    assert.ok(!refused.admitted);
    assert.equal(refused.retryAfterS, 30);
    assert.ok(!admit().admitted, 'still empty: refusals took nothing and gave nothing');
    now += 30_000;
    assert.ok(admit().admitted, 'one request back after half a minute');
    assert.ok(!admit().admitted);
    assert.ok(limiter.admit('token:b').admitted, 'another caller has its own bucket');
  });

  it('counts requests in flight until each is released, once', () => {
    const limiter = createCallerLimiter({ maxConnections: 10, maxInFlight: 2, ratePerMinute: 0 });
    const first = limiter.admit('address:127.0.0.1');
    const second = limiter.admit('address:127.0.0.1');
    assert.ok(first.admitted && second.admitted);
    const third = limiter.admit('address:127.0.0.1');
    assert.ok(!third.admitted);
    assert.match(third.message, /at most 2 at once/);
    first.release();
    first.release(); // a second release of the same request frees nothing more
    assert.ok(limiter.admit('address:127.0.0.1').admitted);
    assert.ok(!limiter.admit('address:127.0.0.1').admitted);
  });

  it('forgets callers with nothing in flight and a full bucket, so rotating tokens do not pile up', () => {
    let now = 0;
    const limiter = createCallerLimiter({ maxConnections: 10, maxInFlight: 1, ratePerMinute: 60 }, () => now);
    const held = limiter.admit('token:held');
    assert.ok(held.admitted);
    for (let i = 0; i < 10_000; i++) {
      const admission = limiter.admit(`token:${i}`);
      assert.ok(admission.admitted);
      admission.release();
      now += 1_000; // each bucket is full again a second later
    }
    assert.ok(limiter.tracked() <= 1_025, `${limiter.tracked()} callers remembered`);
    // A caller still holding a request is never forgotten: its limit holds across sweeps.
    assert.ok(!limiter.admit('token:held').admitted);
    held.release();
    assert.ok(limiter.admit('token:held').admitted);
  });
});
