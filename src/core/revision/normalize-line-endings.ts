import { hasForeignLineEndings, normalizeLineEndings as normalized } from '../../shared/line-endings.js';
import { contentVersion, readBankFiles } from '../bank/bank-files.js';
import type { Caller } from '../caller.js';
import type { FileWrite, Preimage, RevisionInfo } from '../commit/record.js';
import { spaceKeys } from '../layout.js';
import { openRevision } from './common.js';
import { commitRevision } from './revision-commit.js';
import type { RevisionDeps } from './types.js';

/**
 * Line endings normalised (shared/line-endings.ts) as a revision, for `doctor --fix`: the one kind
 * that may find nothing to do (then no revision), and the one that touches the synthesis outside the
 * revision, by a compare-and-swap under the same lease.
 */

/**
 * Normalises the line endings of a space's Markdown (shared/line-endings.ts) — bank files and
 * rules as one revision (each file's text before kept in history), the synthesis by a
 * compare-and-swap under the same lease — for text an older version, a hand or a planted file
 * left with `\r\n`, `\r` or a byte-order mark (`doctor --fix`). Only line endings change;
 * nothing is masked or refused. Says what it normalised; a revision only when a file or the rules changed.
 */
export async function normalizeLineEndings(deps: RevisionDeps, caller: Caller, input: { space_id: string; reason?: string }) {
  const { context } = deps;
  const { storage } = context;
  const { spaceId, reason } = await openRevision(context, caller, input);
  const keys = spaceKeys(spaceId);
  const done = { files: [] as string[], rules: false, synthesis: false };
  const id = await commitRevision(
    deps,
    caller,
    spaceId,
    async () => {
      const bank = await readBankFiles(context, spaceId);
      const writes: FileWrite[] = [];
      const preimages: Preimage[] = [];
      const files: RevisionInfo['files'] = [];
      for (const [filename, file] of [...bank].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (!hasForeignLineEndings(file.content)) continue;
        const content = normalized(file.content);
        writes.push({ filename, content, expectedEtag: file.etag, kind: 'updated' });
        preimages.push({ filename, path: [], content: file.content });
        files.push({ filename, existed: true, version_after: contentVersion(content) });
      }
      const stored = await storage.get(keys.rules);
      const before = stored?.body.toString('utf8');
      const rules = before !== undefined && hasForeignLineEndings(before) ? normalized(before) : undefined;
      done.files = files.map((file) => file.filename);
      done.rules = rules !== undefined;
      if (writes.length === 0 && rules === undefined) return null;
      return {
        writes,
        preimages,
        ...(rules !== undefined ? { rules: { content: rules, expectedEtag: stored?.etag ?? null } } : {}),
        revision: {
          action: 'normalize' as const,
          by: caller.agent,
          reason,
          files,
          ...(rules !== undefined ? { rules: { before: before as string, version_after: contentVersion(rules) } } : {}),
        },
      };
    },
    {
      // The synthesis is no revision's file here: only its line endings change, by compare-and-swap under the lease.
      then: async () => {
        const synthesis = await storage.get(keys.synthesis);
        const text = synthesis?.body.toString('utf8');
        if (!synthesis || text === undefined || !hasForeignLineEndings(text)) return;
        // Compare-and-swap: a writer that takes no lease (an older version) is never overwritten.
        await storage.put(keys.synthesis, normalized(text), { ifMatch: synthesis.etag, contentType: 'text/markdown; charset=utf-8' });
        done.synthesis = true;
      },
    },
  );
  return { status: 'ok' as const, space_id: spaceId, ...(id ? { revision_id: id } : {}), ...done };
}
