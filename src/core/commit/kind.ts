import type { CoreContext } from '../context.js';
import type { CommitRecord } from './record.js';

/**
 * What the commit room knows of a kind of commit (a consolidation, a compaction, a correction, a
 * forget): its name, how its record is checked, how it is rolled forward. The room writes a record,
 * finds it pending after a cut and hands it back to its kind, as LevelDB's log hands its records to
 * their readers: it never interprets one. Each client implements this beside its own code; the
 * composition (core.ts) registers them.
 */
export interface CommitKind {
  /** The `kind` its records carry (a record without one is a consolidation's: written before kinds existed). */
  readonly kind: NonNullable<CommitRecord['kind']>;
  /**
   * Checks what only this kind's record holds, once pending.ts has checked what every record holds
   * (id, space, date, notes, writes, metrics); `written` is the names the record writes. A record is
   * input: throws `invalid_input`, and the record is quarantined, never applied.
   */
  verify(record: Readonly<Record<string, unknown>>, written: ReadonlySet<string>): void;
  /**
   * Rolls a committed record forward to its end, the pending record deleted last. Every step is
   * idempotent: run again after a cut at any point (kill -9 included), by this run or the next
   * holder of the space's lease, it finishes the same commit.
   */
  rollForward(context: CoreContext, record: CommitRecord): Promise<void>;
}

/** The kinds registered with the commit room, by name, in the order they were registered. */
export type CommitKinds = ReadonlyMap<string, CommitKind>;

/** The registry the composition gives the context; a kind registered twice is a programming error. */
export function registerCommitKinds(kinds: readonly CommitKind[]): CommitKinds {
  const registry = new Map<string, CommitKind>();
  for (const kind of kinds) {
    if (registry.has(kind.kind)) throw new Error(`commit kind ${kind.kind} is registered twice`);
    registry.set(kind.kind, kind);
  }
  return registry;
}

/** The kind of a record (`consolidation` when it names none); pending.ts has refused a record of a kind none registered. */
export function kindOf(kinds: CommitKinds, record: Pick<CommitRecord, 'kind' | 'id'>): CommitKind {
  const kind = kinds.get(record.kind ?? 'consolidation');
  if (!kind) throw new Error(`commit ${record.id} is a ${record.kind}, which no kind of commit registered`);
  return kind;
}

declare module '../context.js' {
  interface CoreContext {
    /**
     * The kinds of commit the composition registered (core.ts): how the commit room checks and
     * finishes a record left pending, without knowing any kind. Declared here, not in context.ts:
     * the base stands below the commit room and names nothing of it.
     */
    commitKinds: CommitKinds;
  }
}
