import { stampToIso } from '../../note-name.js';
import { parseRef, summaryHash, type SummaryRecord } from '../../derived/summary-record.js';
import type { Child, LevelPlan, Planned, StoredView, Strategy, SummaryParams, Unit } from './plan-types.js';

/**
 * Planning, pure: from the level below and the summaries stored, which summaries a level should
 * have, which are kept, sealed, (re)generated or deleted (seed 003, "seal once, grow last").
 * Nothing here reads the store or calls a model, so a plan is the same in every process that
 * sees the same store: a run killed at any point is finished by the next, without duplicates.
 */
export type { Action, Child, LevelPlan, Planned, StoredView, Strategy, SummaryParams, Unit } from './plan-types.js';

/** Splits a note's text into n slices of nearly equal length, never inside a surrogate pair. */
export function sliceText(text: string, n: number): string[] {
  const slices: string[] = [];
  let start = 0;
  for (let i = 1; i <= n; i++) {
    let end = i === n ? text.length : Math.floor((text.length * i) / n);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    slices.push(text.slice(start, end));
    start = end;
  }
  return slices;
}

/** How many slices a note of this length is cut into (1: whole). */
export const slicesFor = (chars: number, params: SummaryParams): number =>
  chars > params.windowChars * (1 + params.wiggle) ? Math.ceil(chars / params.windowChars) : 1;

/** Two L1 refs overlap when they name the same note and not two different slices of one cut. */
function refsOverlap(a: string, b: string): boolean {
  const x = parseRef(a);
  const y = parseRef(b);
  if (x.filename !== y.filename) return false;
  return !(x.slice && y.slice && x.slice.n === y.slice.n && x.slice.i !== y.slice.i);
}

/**
 * Sealed level-1 summaries that do not overlap, the oldest first: after a full rebuild cut short,
 * an older sealed summary and a newer one may cover the same note. The older one wins: the
 * partition it belongs to was complete when the rebuild started, so keeping it never leaves a note
 * uncovered; the newer ones are deleted, and the rebuild can simply be run again.
 */
export function acceptSealed(stored: readonly StoredView[]): { accepted: StoredView[]; rejected: StoredView[] } {
  const byFile = new Map<string, string[]>();
  const accepted: StoredView[] = [];
  const rejected: StoredView[] = [];
  const sealed = stored.filter((s) => s.sealed).sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
  for (const summary of sealed) {
    const clash = summary.covers.some((ref) => (byFile.get(parseRef(ref).filename) ?? []).some((other) => refsOverlap(ref, other)));
    if (clash) {
      rejected.push(summary);
      continue;
    }
    accepted.push(summary);
    for (const ref of summary.covers) {
      const file = parseRef(ref).filename;
      byFile.set(file, [...(byFile.get(file) ?? []), ref]);
    }
  }
  return { accepted, rejected };
}

const bounds = (target: number, wiggle: number) => ({ low: target * (1 - wiggle), high: target * (1 + wiggle) });

/**
 * Cuts units into windows at unit boundaries: a window closes once it holds at least
 * window·(1−wiggle) characters, or before a unit that would take it past window·(1+wiggle).
 * `full` is false only for a last window that closed for neither reason (it may still grow).
 */
export function cutWindows<T extends { chars: number }>(units: readonly T[], params: SummaryParams): Array<{ units: T[]; full: boolean }> {
  const { low, high } = bounds(params.windowChars, params.wiggle);
  const windows: Array<{ units: T[]; full: boolean }> = [];
  let current: T[] = [];
  let total = 0;
  for (const unit of units) {
    if (current.length > 0 && total + unit.chars > high) {
      windows.push({ units: current, full: true });
      current = [];
      total = 0;
    }
    current.push(unit);
    total += unit.chars;
    if (total >= low) {
      windows.push({ units: current, full: true });
      current = [];
      total = 0;
    }
  }
  if (current.length > 0) windows.push({ units: current, full: false });
  return windows;
}

/** A note id as it may appear in a summary id: [A-Za-z0-9-], starting with a letter or digit. */
const sanitize = (text: string): string => text.replace(/[^A-Za-z0-9-]/g, '').replace(/^-+/, '') || 'x';

/** The id a level-1 summary takes from its first unit. */
export function level1Id(unit: Pick<Unit, 'ref' | 'stamp' | 'noteId'>): string {
  const slice = parseRef(unit.ref).slice;
  return `L1-${unit.stamp}-${sanitize(unit.noteId)}${slice && slice.i > 1 ? `-p${slice.i}` : ''}`;
}

/** The id a group of level k takes from its first child: `L{k}-` + the child's id without its level and revision. */
export const groupId = (level: number, firstChild: string): string => `L${level}-${firstChild.replace(/^L\d-/, '').replace(/-r\d+$/, '')}`;

interface Candidate {
  naturalId: string;
  level: number;
  sealed: boolean;
  covers: string[];
  hash: string;
  range_start: string;
  range_end: string;
  chars_in: number;
  members: number[];
}

const contentKey = (covers: readonly string[], hash: string) => `${hash}\n${covers.join('\n')}`;

/**
 * Gives each candidate its id and action. A candidate whose covers and hash match a stored summary
 * is that summary (kept, or sealed now); one that starts where a stored open summary starts
 * replaces it in place (it grew); any other takes its natural id. An id never names two contents:
 * when the natural id belongs to a sealed summary with other covers (a full rebuild with other
 * sizes), the new one gets the next free `-r{n}`, and the old one is deleted as stale.
 */
function assign(candidates: readonly Candidate[], stored: readonly StoredView[], claimed: Set<string>): Planned[] {
  const byContent = new Map<string, StoredView>();
  for (const summary of stored) if (!claimed.has(summary.id)) byContent.set(contentKey(summary.covers, summary.hash), summary);
  const openByFirst = new Map<string, StoredView>();
  for (const summary of stored) if (!summary.sealed && !claimed.has(summary.id) && summary.covers[0] !== undefined) openByFirst.set(summary.covers[0], summary);
  const taken = new Set([...stored.map((s) => s.id), ...claimed]);
  const planned: Planned[] = [];
  for (const candidate of candidates) {
    const { naturalId, ...base } = candidate;
    const same = byContent.get(contentKey(candidate.covers, candidate.hash));
    if (same && !claimed.has(same.id)) {
      claimed.add(same.id);
      const sealed = candidate.sealed || same.sealed;
      planned.push({ ...base, id: same.id, sealed, action: sealed && !same.sealed ? 'seal' : 'keep', replaces: same });
      continue;
    }
    const open = openByFirst.get(candidate.covers[0] as string);
    if (open && !claimed.has(open.id)) {
      claimed.add(open.id);
      planned.push({ ...base, id: open.id, action: 'regenerate', replaces: open });
      continue;
    }
    let id = naturalId;
    for (let n = 2; taken.has(id); n++) id = `${naturalId}-r${n}`;
    taken.add(id);
    claimed.add(id);
    planned.push({ ...base, id, action: 'create' });
  }
  return planned;
}

const byPosition = (a: { range_start: string; members: number[] }, b: { range_start: string; members: number[] }) =>
  a.range_start < b.range_start ? -1 : a.range_start > b.range_start ? 1 : (a.members[0] ?? Infinity) - (b.members[0] ?? Infinity);

/**
 * Level 1. Units covered by sealed summaries stay as they are (incremental). The uncovered units
 * form runs; a run followed by covered units (a failed earlier window, a late note) is cut into
 * windows that are all sealed. The last run is cut the same way, but its last window, unless full,
 * is sealed only once its newest note is older than flushAfterMs and it holds minFlushChars; else it
 * is summarised open if it holds minFlushChars, or waits (pending). `full` ignores what is stored,
 * except to reuse summaries whose covers and hash match.
 */
export function planLevel1(input: { units: readonly Unit[]; stored: readonly StoredView[]; params: SummaryParams; now: Date; strategy: Strategy }): LevelPlan {
  const { units, stored, params } = input;
  const position = new Map(units.map((unit, i) => [unit.ref, i]));
  const { accepted } = input.strategy === 'full' ? { accepted: [] } : acceptSealed(stored);
  const covered = new Set(accepted.flatMap((s) => s.covers));
  const kept: Planned[] = accepted.map((s) => ({
    id: s.id,
    level: 1,
    sealed: true,
    covers: s.covers,
    hash: s.hash,
    range_start: s.range_start,
    range_end: s.range_end,
    chars_in: 0,
    action: 'keep',
    replaces: s,
    members: s.covers.map((ref) => position.get(ref) ?? Infinity),
  }));

  const runs: Array<{ indexes: number[]; last: boolean }> = [];
  let run: number[] = [];
  units.forEach((unit, i) => {
    if (!covered.has(unit.ref)) run.push(i);
    else if (run.length > 0) {
      runs.push({ indexes: run, last: false });
      run = [];
    }
  });
  if (run.length > 0) runs.push({ indexes: run, last: true });

  const candidates: Candidate[] = [];
  let pending = { units: 0, chars: 0 };
  for (const { indexes, last } of runs) {
    const windows = cutWindows(
      indexes.map((i) => ({ i, chars: (units[i] as Unit).chars })),
      params,
    );
    windows.forEach((window, w) => {
      const members = window.units.map((u) => u.i);
      const chars = window.units.reduce((sum, u) => sum + u.chars, 0);
      let sealed = true;
      if (last && w === windows.length - 1 && !window.full) {
        const newest = Date.parse(stampToIso((units[members[members.length - 1] as number] as Unit).stamp));
        if (chars < params.minFlushChars) {
          pending = { units: members.length, chars };
          return;
        }
        sealed = input.now.getTime() - newest > params.flushAfterMs;
      }
      const windowUnits = members.map((i) => units[i] as Unit);
      const first = windowUnits[0] as Unit;
      candidates.push({
        naturalId: level1Id(first),
        level: 1,
        sealed,
        covers: windowUnits.map((u) => u.ref),
        hash: summaryHash(
          1,
          windowUnits.map((u) => ({ ref: u.ref, hash: u.hash })),
        ),
        range_start: stampToIso(first.stamp),
        range_end: stampToIso((windowUnits[windowUnits.length - 1] as Unit).stamp),
        chars_in: chars,
        members,
      });
    });
  }
  const claimed = new Set(kept.map((s) => s.id));
  const planned = [...kept, ...assign(candidates, stored, claimed)].sort(byPosition);
  return { level: 1, summaries: planned, stale: stored.filter((s) => !claimed.has(s.id)), pending };
}

/**
 * Level k ≥ 2: groups of adjacent children of about groupChars characters of summary, with
 * hysteresis. Stored groups keep their members (incremental). A child in no group joins its left
 * neighbour's group when that group is still open (not sealed, not yet at groupChars·(1−wiggle)
 * with every member sealed) and stays within groupChars·(1+wiggle); else it starts a group. A group
 * is sealed when every member is sealed and it reached groupChars·(1−wiggle) or another group
 * follows it (it can no longer grow): seal once, at every level. A group whose hash (from its
 * children's hashes) differs from the stored one is regenerated, so a child that changed dirties
 * its parent, and so on up. Fewer than two children: no group at all.
 */
export function planGroups(input: {
  level: number;
  children: readonly Child[];
  stored: readonly StoredView[];
  params: SummaryParams;
  strategy: Strategy;
}): LevelPlan {
  const { level, children, stored, params } = input;
  const empty = { level, summaries: [], stale: [...stored], pending: { units: 0, chars: 0 } };
  if (children.length < 2) return empty;
  const { low, high } = bounds(params.groupChars, params.wiggle);
  const index = new Map(children.map((child, i) => [child.id, i]));
  const owner = new Array<number>(children.length).fill(-1);
  const groups: Array<{ members: number[]; storedSealed: boolean }> = [];

  if (input.strategy === 'incremental') {
    const oldestFirst = [...stored].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    for (const summary of oldestFirst) {
      const members = summary.covers.map((id) => index.get(id)).filter((i): i is number => i !== undefined && owner[i] === -1);
      if (members.length === 0) continue;
      members.sort((a, b) => a - b);
      for (const i of members) owner[i] = groups.length;
      groups.push({ members, storedSealed: summary.sealed });
    }
  }
  const charsOf = (members: number[]) => members.reduce((sum, i) => sum + (children[i] as Child).chars, 0);
  const allSealed = (members: number[]) => members.every((i) => (children[i] as Child).sealed);
  children.forEach((child, i) => {
    if (owner[i] !== -1) return;
    const left = i > 0 ? (owner[i - 1] as number) : -1;
    const group = left >= 0 ? groups[left] : undefined;
    if (group && !group.storedSealed) {
      const chars = charsOf(group.members);
      const closed = chars >= low && allSealed(group.members);
      if (!closed && chars + child.chars <= high) {
        group.members.push(i);
        group.members.sort((a, b) => a - b);
        owner[i] = left;
        return;
      }
    }
    owner[i] = groups.length;
    groups.push({ members: [i], storedSealed: false });
  });

  const lastChild = children.length - 1;
  const candidates: Candidate[] = groups.map((group) => {
    const members = group.members.map((i) => children[i] as Child);
    const chars = charsOf(group.members);
    return {
      naturalId: groupId(level, (members[0] as Child).id),
      level,
      sealed: allSealed(group.members) && (chars >= low || !group.members.includes(lastChild)),
      covers: members.map((c) => c.id),
      hash: summaryHash(
        level,
        members.map((c) => ({ ref: c.id, hash: c.hash })),
      ),
      range_start: members.reduce((min, c) => (c.range_start < min ? c.range_start : min), (members[0] as Child).range_start),
      range_end: members.reduce((max, c) => (c.range_end > max ? c.range_end : max), (members[0] as Child).range_end),
      chars_in: chars,
      members: group.members,
    };
  });
  const claimed = new Set<string>();
  const planned = assign(candidates, stored, claimed).sort(byPosition);
  return { level, summaries: planned, stale: stored.filter((s) => !claimed.has(s.id)), pending: { units: 0, chars: 0 } };
}

/** What planning needs of a stored summary. */
export const viewOf = (record: SummaryRecord): StoredView => ({
  id: record.id,
  sealed: record.sealed,
  covers: record.covers,
  hash: record.hash,
  created_at: record.created_at,
  range_start: record.range_start,
  range_end: record.range_end,
  chars: record.summary.length,
});
