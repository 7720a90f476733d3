import type { Caller } from '../caller.js';
import { applyCommit, commitAndApply } from '../commit/commit.js';
import { type CommitRecord, noteFreeRecord } from '../commit/record.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import { SYNTHESIS_FILE } from '../layout.js';
import { redactLines, removedLines, withoutRemovedLines } from './targets.js';
import type { CommitOptions, Planned, RevisionDeps } from './types.js';

/**
 * How every revision kind commits: under the space's lease, its plan read and computed there, through
 * the one commit protocol (commit.ts, `kind: 'revision'`). In one place so that a write, a delete, the
 * rules, line endings and a revert take turns and keep history the same way — a `secret` one included,
 * whose record keeps no line it removed.
 */

/**
 * Commits one revision under the space's lease; `plan` reads the store under it and returns what to
 * write (null: nothing to, no revision); `then` runs under the lease once it is applied. With `secret`, what the
 * revision keeps of the earlier texts (pre-images, rules before) loses the lines the new ones no longer have;
 * rolling it forward deletes the index snapshots too (commit.ts).
 */
export async function commitRevision(
  deps: RevisionDeps,
  caller: Caller,
  spaceId: string,
  plan: () => Promise<Planned>,
  options?: CommitOptions,
): Promise<string>;
export async function commitRevision(
  deps: RevisionDeps,
  caller: Caller,
  spaceId: string,
  plan: () => Promise<Planned | null>,
  options?: CommitOptions,
): Promise<string | null>;
export async function commitRevision(
  deps: RevisionDeps,
  caller: Caller,
  spaceId: string,
  plan: () => Promise<Planned | null>,
  options: CommitOptions = {},
): Promise<string | null> {
  const { context } = deps;
  const held = await lockSpace(context, spaceId, caller, 'revision', { waitMs: PERSON_LEASE_WAIT_MS });
  try {
    const planned = await plan();
    if (!planned) {
      await options.then?.();
      return null;
    }
    const { writes, rules } = planned;
    let { preimages, revision } = planned;
    if (options.secret) {
      const after = new Map(writes.map((write) => [write.filename, write.content]));
      const removed = new Map(preimages.map((preimage) => [preimage.filename, removedLines(preimage.content, after.get(preimage.filename) ?? '')]));
      preimages = preimages.map((preimage) => ({ ...preimage, content: redactLines(preimage.content, removed.get(preimage.filename) ?? new Set()) }));
      // The synthesis is copied into each consolidation's record: those holding a line it removed lose their copy (commit.ts).
      const copies = await synthesisCopiesHolding(deps, spaceId, removed.get(SYNTHESIS_FILE));
      revision = {
        ...revision,
        secret: true,
        ...(revision.rules && rules ? { rules: { ...revision.rules, before: withoutRemovedLines(revision.rules.before, rules.content) } } : {}),
        ...(copies.length > 0 ? { synthesis_copies: copies } : {}),
      };
    }
    const record: CommitRecord = {
      ...noteFreeRecord(context, spaceId, 'revision'),
      writes,
      metrics: { by: caller.agent, files: writes.length },
      preimages,
      ...(rules ? { rules } : {}),
      revision,
    };
    await commitAndApply(context, held, record, () => applyCommit(context, record));
    if (writes.length > 0)
      deps.onCommitted?.(
        spaceId,
        writes.filter((w) => w.filename !== SYNTHESIS_FILE).map((w) => ({ filename: w.filename, kind: w.kind })),
        writes.some((w) => w.filename === SYNTHESIS_FILE),
      );
    context.logger.info(`revision ${record.id} of '${spaceId}' by ${caller.agent}: ${revision.action}`, { files: writes.map((w) => w.filename) });
    await options.then?.();
    return record.id;
  } finally {
    await held.release();
  }
}

/** The consolidations whose record keeps a copy of the synthesis holding one of `removed` (lines, trimmed). */
async function synthesisCopiesHolding({ corpus }: RevisionDeps, spaceId: string, removed: ReadonlySet<string> | undefined): Promise<string[]> {
  if (!removed || removed.size === 0) return [];
  const records = (await corpus.history(spaceId)).filter((record) => record.kind === 'consolidation');
  return records
    .filter((record) => {
      const copy = (record as { synthesis?: { content?: unknown } }).synthesis?.content;
      return typeof copy === 'string' && copy.split('\n').some((line) => removed.has(line.trim()));
    })
    .map((record) => record.id);
}
