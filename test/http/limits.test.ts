import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCallerLimiter, createConnectionTable, type HttpLimits } from '../../src/http/limits.js';

const limits = (set: Partial<HttpLimits>): HttpLimits => ({ maxConnections: 10, maxInFlight: 10, ratePerMinute: 0, authFailuresPerMinute: 0, ...set });

describe('per-caller HTTP limits', () => {
  it('refills the rate bucket with time, and a refused request costs nothing', () => {
    let now = 0;
    const limiter = createCallerLimiter(limits({ ratePerMinute: 2 }), () => now);
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
    const limiter = createCallerLimiter(limits({ maxInFlight: 2 }));
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
    const limiter = createCallerLimiter(limits({ maxInFlight: 1, ratePerMinute: 60 }), () => now);
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

  it('counts each call of a batch, and refuses a batch whole: then the request costs nothing', () => {
    const limiter = createCallerLimiter(limits({ maxInFlight: 100, ratePerMinute: 20 }), () => 0);
    const first = limiter.admit('token:a');
    assert.ok(first.admitted);
    assert.equal(first.charge(14), undefined, 'a batch of 15');
    first.release();
    const second = limiter.admit('token:a');
    assert.ok(second.admitted);
    const never = second.charge(24);
    assert.match(never?.message ?? '', /a batch of 25 calls is more than the 20 a token may make a minute/);
    assert.equal(never?.retryAfterS, undefined, 'it never will fit');
    second.release();
    const third = limiter.admit('token:a');
    assert.ok(third.admitted);
    const later = third.charge(5);
    assert.match(later?.message ?? '', /at most 20 a minute per token/);
    assert.ok((later?.retryAfterS ?? 0) >= 1, 'a batch of 6 fits later');
    third.release();
    // 20 - 15 = 5 left: the refused batches took nothing, their own calls included.
    const fourth = limiter.admit('token:a');
    assert.ok(fourth.admitted);
    assert.equal(fourth.charge(4), undefined, 'the 5 left');
    assert.ok(!limiter.admit('token:a').admitted);

    const narrow = createCallerLimiter(limits({ maxInFlight: 3 }));
    const held = narrow.admit('token:b');
    assert.ok(held.admitted);
    assert.match(held.charge(3)?.message ?? '', /a batch of 4 calls is more than the 3 a token may have in flight at once/);
    const busy = narrow.admit('token:b');
    assert.ok(busy.admitted);
    assert.equal(busy.charge(1), undefined);
    assert.ok(narrow.admit('token:b').admitted, 'the refused batch holds nothing: 2 + 1');
    assert.ok(!narrow.admit('token:b').admitted, 'the batch holds its two calls until it is released');
    busy.release();
    assert.ok(narrow.admit('token:b').admitted);
  });

  it('moves a request from its address to its token once authenticated; a locked address still serves its known tokens', () => {
    const limiter = createCallerLimiter(limits({ maxInFlight: 1, authFailuresPerMinute: 2 }), () => 0);
    const first = limiter.admit('address:10.0.0.1');
    assert.ok(first.admitted);
    assert.ok(!limiter.admit('address:10.0.0.1').admitted, 'the address holds one');
    assert.equal(first.moveTo('token:a'), undefined);
    assert.ok(limiter.admit('address:10.0.0.1').admitted, 'moved off the address');
    assert.ok(!limiter.admit('token:a').admitted, 'onto the token');
    first.release();
    limiter.authenticated('token:a');
    assert.ok(limiter.isKnown('token:a'));

    assert.equal(limiter.locked('10.0.0.1'), undefined);
    limiter.failed('10.0.0.1', 'token:x');
    limiter.failed('10.0.0.1', 'token:y');
    const locked = limiter.locked('10.0.0.1');
    assert.match(locked?.message ?? '', /too many failed authentications from this address: at most 2 a minute/);
    assert.equal(locked?.retryAfterS, 30);
    assert.equal(limiter.locked('10.0.0.2'), undefined, 'another address is not');
    assert.ok(limiter.isKnown('token:a'), 'the lock is for tokens not known; the front door lets known ones through');
    limiter.failed('10.0.0.1', 'token:a');
    assert.ok(!limiter.isKnown('token:a'), 'a known token that fails (revoked) is known no more');
  });
});

describe('HTTP connections table', () => {
  const socket = (name: string) => ({
    name,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  });
  type Fake = ReturnType<typeof socket>;

  it('at the cap, closes the oldest idle connection no token proved of the address holding the most; never a proven or busy one', () => {
    const table = createConnectionTable<Fake>(6);
    const [b1, a1, a2, a3, a4, b2] = ['b1', 'a1', 'a2', 'a3', 'a4', 'b2'].map(socket) as [Fake, Fake, Fake, Fake, Fake, Fake];
    for (const [s, address] of [
      [b1, 'b'],
      [a1, 'a'],
      [a2, 'a'],
      [a3, 'a'],
      [a4, 'a'],
    ] as const)
      assert.ok(table.add(s, address));
    assert.deepEqual(table.counts(), { open: 5, unproven: 5 });
    assert.ok(table.add(b2, 'b'));
    assert.ok(![b1, a1, a2, a3, a4, b2].some((s) => s.destroyed), 'nothing is closed below the cap');

    table.prove(a1);
    table.busy(a2, 1);
    const d1 = socket('d1');
    assert.ok(table.add(d1, 'd'));
    assert.ok(a3.destroyed, 'a held the most (3 not proven): its oldest idle one went (a1 proven, a2 busy)');
    const d2 = socket('d2');
    assert.ok(table.add(d2, 'd'));
    assert.ok(b1.destroyed && !b2.destroyed, 'then a and b hold 2 each: the oldest of them went');
    assert.ok(!a1.destroyed && !a2.destroyed && !a4.destroyed);
    assert.deepEqual(table.counts(), { open: 6, unproven: 5 });

    // Only proven or busy connections left to close: a newcomer is refused.
    const full = createConnectionTable<Fake>(2);
    const p = socket('p');
    const q = socket('q');
    full.add(p, 'x');
    full.prove(p);
    full.add(q, 'y');
    full.busy(q, 1);
    assert.equal(full.add(socket('r'), 'z'), false);
    full.busy(q, -1);
    assert.ok(full.add(socket('r'), 'z'));
    assert.ok(q.destroyed && !p.destroyed);
    full.remove(p);
    assert.deepEqual(full.counts(), { open: 1, unproven: 1 });
  });
});
