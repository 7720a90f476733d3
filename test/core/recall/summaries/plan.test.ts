/** Summary planning (seed 003), pure: windows, slicing, flushes, gaps, groups, hysteresis, dirty propagation. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acceptSealed,
  cutWindows,
  planGroups,
  planLevel1,
  sliceText,
  type Child,
  type LevelPlan,
  type StoredView,
  type SummaryParams,
  type Unit,
} from '../../../../src/core/recall/summaries/plan.js';
import { summaryHash } from '../../../../src/core/derived/summary-record.js';

const params: SummaryParams = { windowChars: 1000, minFlushChars: 500, groupChars: 1000, wiggle: 0.2, flushAfterMs: 20 * 60_000 };
const NOW = new Date('2026-02-20T18:30:00Z');

/** Note i, written at 18:00 + i seconds. */
function unit(i: number, chars: number, slice?: { i: number; n: number }): Unit {
  const stamp = `20260220T18${String(Math.floor(i / 60)).padStart(2, '0')}${String(i % 60).padStart(2, '0')}`;
  const id = `${String(i).padStart(2, '0')}abcdef`;
  const filename = `${stamp}_agent_progress_${id}.md`;
  return { ref: slice ? `${filename}#${slice.i}/${slice.n}` : filename, filename, stamp, noteId: id, chars, hash: `h${i}-${chars}` };
}

/** What a run would store for a plan: stored views of its summaries. */
function store(plan: LevelPlan, createdAt = '2026-02-20T18:20:00Z'): StoredView[] {
  return plan.summaries.map((s) => ({
    id: s.id,
    sealed: s.sealed,
    covers: s.covers,
    hash: s.hash,
    created_at: createdAt,
    range_start: s.range_start,
    range_end: s.range_end,
    chars: 100,
  }));
}

const level1 = (units: Unit[], stored: StoredView[] = [], now = NOW, strategy: 'incremental' | 'full' = 'incremental', p = params) =>
  planLevel1({ units, stored, params: p, now, strategy });

const shape = (plan: LevelPlan) => plan.summaries.map((s) => `${s.action}:${s.sealed ? 'S' : 'o'}:${s.covers.length}`);

describe('level 1 windows', () => {
  it('cuts at a unit boundary once the window is within ±wiggle, never past the upper bound', () => {
    const sizes = (windows: Array<{ units: Array<{ chars: number }> }>) => windows.map((w) => w.units.map((u) => u.chars));
    assert.deepEqual(
      sizes(
        cutWindows(
          [300, 300, 300, 300, 300, 300].map((chars) => ({ chars })),
          params,
        ),
      ),
      [
        [300, 300, 300],
        [300, 300, 300],
      ],
    );
    // 700 + 600 would pass 1200: the window closes at 700 (below 800), since the next note cannot fit.
    assert.deepEqual(
      sizes(
        cutWindows(
          [700, 600, 100].map((chars) => ({ chars })),
          params,
        ),
      ),
      [[700], [600, 100]],
    );
    const last = cutWindows(
      [900, 100].map((chars) => ({ chars })),
      params,
    );
    assert.deepEqual(
      last.map((w) => w.full),
      [true, false],
    );
  });

  it('seals full windows; the remainder is open with min_flush_chars, pending below it', () => {
    const units = [unit(0, 400), unit(1, 400), unit(2, 500), unit(3, 400), unit(4, 300)];
    const plan = level1(units, [], new Date('2026-02-20T18:00:10Z'));
    assert.deepEqual(shape(plan), ['create:S:2', 'create:S:2']);
    assert.deepEqual(plan.pending, { units: 1, chars: 300 });
    const open = level1([...units, unit(5, 300)], [], new Date('2026-02-20T18:00:10Z'));
    assert.deepEqual(shape(open), ['create:S:2', 'create:S:2', 'create:o:2']);
    assert.deepEqual(open.pending, { units: 0, chars: 0 });
    assert.equal(open.summaries[0]!.id, `L1-${units[0]!.stamp}-00abcdef`);
    assert.equal(open.summaries[0]!.range_start, '2026-02-20T18:00:00Z');
    assert.equal(open.summaries[0]!.range_end, '2026-02-20T18:00:01Z');
    assert.equal(
      open.summaries[0]!.hash,
      summaryHash(
        1,
        [units[0]!, units[1]!].map((u) => ({ ref: u.ref, hash: u.hash })),
      ),
    );
  });

  it('seals the remainder once its newest note is older than flush_after_ms, if it has min_flush_chars', () => {
    const units = [unit(0, 300), unit(1, 300)];
    assert.deepEqual(shape(level1(units, [], new Date('2026-02-20T18:10:00Z'))), ['create:o:2']);
    assert.deepEqual(shape(level1(units, [], new Date('2026-02-20T18:30:00Z'))), ['create:S:2']);
    assert.deepEqual(shape(level1([unit(0, 300)], [], new Date('2026-02-21T00:00:00Z'))), [], 'below min_flush_chars: pending, however old');
  });

  it('slices a note longer than window·(1+wiggle) into ceil(len/window) units, with -p ids', () => {
    assert.deepEqual(sliceText('abcdefghij', 3), ['abc', 'def', 'ghij']);
    assert.deepEqual(sliceText('a😀b', 2).join(''), 'a😀b');
    assert.ok(!sliceText('a😀b', 2)[0]!.endsWith('\ud83d'), 'never inside a surrogate pair');
    const units = [unit(0, 900), unit(1, 800, { i: 1, n: 3 }), unit(1, 800, { i: 2, n: 3 }), unit(1, 800, { i: 3, n: 3 })];
    const plan = level1(units, [], new Date('2026-02-20T19:00:00Z'));
    assert.deepEqual(
      plan.summaries.map((s) => s.id),
      ['L1-20260220T180000-00abcdef', 'L1-20260220T180001-01abcdef', 'L1-20260220T180001-01abcdef-p2', 'L1-20260220T180001-01abcdef-p3'],
    );
    assert.deepEqual(plan.summaries[2]!.covers, [`${units[1]!.filename}#2/3`]);
  });

  it('keeps sealed windows; the open window grows under the same id and is regenerated', () => {
    const units = [unit(0, 500), unit(1, 500), unit(2, 300), unit(3, 300)];
    const first = level1(units, [], new Date('2026-02-20T18:00:10Z'));
    assert.deepEqual(shape(first), ['create:S:2', 'create:o:2']);
    const same = level1(units, store(first), new Date('2026-02-20T18:00:20Z'));
    assert.deepEqual(shape(same), ['keep:S:2', 'keep:o:2'], 'nothing new: nothing to do');
    const grown = level1([...units, unit(4, 100)], store(first), new Date('2026-02-20T18:00:20Z'));
    assert.deepEqual(shape(grown), ['keep:S:2', 'regenerate:o:3']);
    assert.equal(grown.summaries[1]!.id, first.summaries[1]!.id, 'its first note did not change: neither did its id');
    const full = level1([...units, unit(4, 100), unit(5, 300)], store(first), new Date('2026-02-20T18:00:20Z'));
    assert.deepEqual(shape(full), ['keep:S:2', 'regenerate:S:4']);
    const flushed = level1(units, store(first), new Date('2026-02-20T19:00:00Z'));
    assert.deepEqual(shape(flushed), ['keep:S:2', 'seal:S:2'], 'time flush: sealed without a new summary');
    assert.deepEqual(full.stale, []);
  });

  it('cuts a run followed by covered notes (a gap) into windows that are all sealed', () => {
    const units = [unit(0, 500), unit(1, 500), unit(2, 500), unit(3, 500), unit(4, 100), unit(5, 500), unit(6, 500)];
    const all = level1(units, [], new Date('2026-02-20T18:00:10Z'));
    // A failed earlier window: its summary is missing, the ones after it exist.
    const stored = store(all).filter((s) => s.covers[0] !== units[2]!.ref);
    const plan = level1(units, stored, new Date('2026-02-20T18:00:10Z'));
    assert.deepEqual(shape(plan), ['keep:S:2', 'create:S:2', 'keep:S:3']);
    // A late note (older than sealed ones), tiny: sealed on its own all the same.
    const late = [unit(0, 500), unit(1, 500), { ...unit(2, 50), stamp: '20260220T180001', ref: 'late.md' }, unit(3, 500), unit(4, 500)];
    const before = level1([late[0]!, late[1]!, late[3]!, late[4]!], [], new Date('2026-02-20T18:00:10Z'));
    const after = level1(late, store(before), new Date('2026-02-20T18:00:10Z'));
    assert.deepEqual(shape(after), ['keep:S:2', 'create:S:1', 'keep:S:2']);
  });

  it('two sealed summaries over one note (a full rebuild cut short): the older is kept, the newer deleted', () => {
    const a: StoredView = {
      id: 'L1-20260220T180000-00abcdef',
      sealed: true,
      covers: ['n0.md', 'n1.md'],
      hash: 'x',
      created_at: '2026-02-20T10:00:00Z',
      range_start: 'a',
      range_end: 'b',
      chars: 1,
    };
    const b: StoredView = { ...a, id: 'L1-20260220T180000-00abcdef-r2', covers: ['n0.md'], created_at: '2026-02-20T11:00:00Z' };
    const c: StoredView = { ...a, id: 'L1-x-p2', covers: ['n2.md#2/2'], created_at: '2026-02-20T12:00:00Z' };
    const d: StoredView = { ...a, id: 'L1-x', covers: ['n2.md#1/2'], created_at: '2026-02-20T12:00:00Z' };
    const { accepted, rejected } = acceptSealed([b, a, c, d]);
    assert.deepEqual(accepted.map((s) => s.id).sort(), [a.id, d.id, c.id].sort(), 'two slices of one cut do not overlap');
    assert.deepEqual(
      rejected.map((s) => s.id),
      [b.id],
    );
  });

  it('full: recomputes the partition, reuses what matches, gives a taken id a -r suffix', () => {
    const units = [unit(0, 300), unit(1, 300), unit(2, 300), unit(3, 300), unit(4, 300), unit(5, 300)];
    const first = level1(units, [], new Date('2026-02-20T19:00:00Z'));
    assert.deepEqual(shape(first), ['create:S:3', 'create:S:3']);
    const same = level1(units, store(first), new Date('2026-02-20T19:00:00Z'), 'full');
    assert.deepEqual(shape(same), ['keep:S:3', 'keep:S:3']);
    const wider = level1(units, store(first), new Date('2026-02-20T19:00:00Z'), 'full', { ...params, windowChars: 2000, minFlushChars: 100 });
    assert.deepEqual(shape(wider), ['create:S:6']);
    assert.equal(wider.summaries[0]!.id, `${first.summaries[0]!.id}-r2`, 'a sealed id never names another content');
    assert.deepEqual(
      wider.stale.map((s) => s.id),
      first.summaries.map((s) => s.id),
    );
  });
});

const child = (n: number, chars: number, sealed = true): Child => ({
  id: `L1-20260220T1800${String(n).padStart(2, '0')}-${n}a`,
  hash: `c${n}`,
  sealed,
  chars,
  range_start: `2026-02-20T18:00:${String(n).padStart(2, '0')}Z`,
  range_end: `2026-02-20T18:00:${String(n).padStart(2, '0')}Z`,
});
const groups = (children: Child[], stored: StoredView[] = [], strategy: 'incremental' | 'full' = 'incremental') =>
  planGroups({ level: 2, children, stored, params, strategy });
const members = (plan: LevelPlan) => plan.summaries.map((s) => s.members.join(','));

describe('levels ≥ 2: groups', () => {
  it('needs at least two children', () => {
    assert.deepEqual(groups([child(0, 300)]).summaries, []);
    assert.equal(groups([child(0, 300), child(1, 300)]).summaries.length, 1);
  });

  it('groups adjacent children up to group_chars·(1+wiggle); sealed at ≥ (1−wiggle) with every member sealed', () => {
    const plan = groups([child(0, 400), child(1, 500), child(2, 400), child(3, 300), child(4, 300)]);
    assert.deepEqual(members(plan), ['0,1', '2,3,4']);
    assert.deepEqual(
      plan.summaries.map((s) => s.sealed),
      [true, true],
    );
    assert.equal(plan.summaries[0]!.id, 'L2-20260220T180000-0a');
    const open = groups([child(0, 400), child(1, 500), child(2, 400), child(3, 300, false)]);
    assert.deepEqual(
      open.summaries.map((s) => s.sealed),
      [true, false],
      'an open child keeps its group open',
    );
  });

  it('append-only with hysteresis: stored groups keep their members; a new child fills the last open group', () => {
    const first = groups([child(0, 300), child(1, 300)]);
    assert.deepEqual(
      first.summaries.map((s) => s.sealed),
      [false],
    );
    const next = groups([child(0, 300), child(1, 300), child(2, 300)], store(first));
    assert.deepEqual(members(next), ['0,1,2']);
    assert.equal(next.summaries[0]!.action, 'regenerate');
    assert.equal(next.summaries[0]!.id, first.summaries[0]!.id);
    assert.equal(next.summaries[0]!.sealed, true);
    // A stored group that grew past the bounds (its open child grew) keeps its members all the same.
    const grown = groups([child(0, 300), child(1, 1100)], store(first));
    assert.deepEqual(members(grown), ['0,1']);
    // A sealed group takes no member: the next child starts a group.
    const after = groups([child(0, 300), child(1, 300), child(2, 300), child(3, 300)], store(next));
    assert.deepEqual(members(after), ['0,1,2', '3']);
    assert.equal(after.summaries[0]!.action, 'keep');
  });

  it('a child that changed makes its group dirty (regenerated); unchanged groups are kept', () => {
    const children = [child(0, 400), child(1, 500), child(2, 400), child(3, 300, false)];
    const first = groups(children);
    const changed = groups([...children.slice(0, 3), { ...child(3, 350, false), hash: 'c3-grown' }], store(first));
    assert.deepEqual(
      changed.summaries.map((s) => s.action),
      ['keep', 'regenerate'],
    );
    // …and the level above sees a new hash for that group, so it is dirty too.
    const parents = planGroups({
      level: 3,
      children: first.summaries.map((s) => ({ id: s.id, hash: s.hash, sealed: s.sealed, chars: 200, range_start: s.range_start, range_end: s.range_end })),
      stored: [],
      params,
      strategy: 'incremental',
    });
    const upper = store(parents);
    const again = planGroups({
      level: 3,
      children: changed.summaries.map((s) => ({ id: s.id, hash: s.hash, sealed: s.sealed, chars: 200, range_start: s.range_start, range_end: s.range_end })),
      stored: upper,
      params,
      strategy: 'incremental',
    });
    assert.deepEqual(
      again.summaries.map((s) => s.action),
      ['regenerate'],
    );
    assert.equal(again.summaries[0]!.id, 'L3-20260220T180000-0a');
  });

  it('a stored group whose first child is gone is replaced; its old record is stale', () => {
    const first = groups([child(0, 300), child(1, 300), child(2, 300)]);
    const next = groups([child(1, 300), child(2, 300)], store(first));
    assert.deepEqual(members(next), ['0,1']);
    assert.equal(next.summaries[0]!.id, 'L2-20260220T180001-1a');
    assert.deepEqual(
      next.stale.map((s) => s.id),
      [first.summaries[0]!.id],
    );
  });
});
