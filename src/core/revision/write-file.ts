import { invalid, LiveMemError } from '../../shared/errors.js';
import { slicer } from '../../shared/yield.js';
import { ReplyFormatError } from '../../llm/reply-json.js';
import { contentVersion } from '../bank/bank-files.js';
import type { Caller } from '../caller.js';
import { applySectionEditsInSlices, sectionEdit } from '../markdown/edit.js';
import type { Redacted } from '../redact/redact.js';
import { checkEditCount } from '../validate.js';
import { checkVersion, keptOut, openRevision, secretKept, what } from './common.js';
import { commitRevision } from './revision-commit.js';
import { checkedText, readTargets, targetName, targetOf } from './targets.js';
import type { BankWriteInput, RevisionDeps, RevisionResult } from './types.js';

/**
 * A person's write (bank_write): a bank file or the synthesis, whole or by the section edits
 * consolidation plans use, created when it does not exist — against the version the caller read,
 * the new text through the checks every person's text meets (targets.ts).
 */

/** Writes a bank file (or the synthesis) whole (`content`) or by section edits (`edits`); creates it when it does not exist. */
export async function writeFile(deps: RevisionDeps, caller: Caller, input: BankWriteInput): Promise<RevisionResult> {
  const { context } = deps;
  const { spaceId, reason } = await openRevision(context, caller, input);
  const filename = targetName(input.filename);
  const hasContent = typeof input.content === 'string';
  if (hasContent === Array.isArray(input.edits)) throw invalid('give either content (the whole file) or edits (section edits), not both and not neither');
  checkEditCount(input.edits?.length ?? 0, 'bank_write');
  const edits = (input.edits ?? []).map((raw, i) => {
    try {
      return sectionEdit(raw, `edits[${i}]`);
    } catch (error) {
      if (error instanceof ReplyFormatError) throw invalid(error.message);
      throw error;
    }
  });
  let created = false;
  let version = '';
  let kept: Redacted | undefined;
  const id = await commitRevision(
    deps,
    caller,
    spaceId,
    async () => {
      const targets = await readTargets(context, spaceId);
      const before = targetOf(targets, filename);
      checkVersion(what(filename), before?.content, input.if_match, spaceId);
      if (!before && !hasContent)
        throw new LiveMemError('not_found', `${what(filename)} does not exist in space '${spaceId}': create it with content`, {
          space_id: spaceId,
          filename,
        });
      let content = hasContent ? (input.content as string) : (before as { content: string }).content;
      content = await applySectionEditsInSlices(content, edits, filename, slicer());
      kept = checkedText(context, targets, filename, content);
      content = kept.text;
      if (before && content === before.content) throw invalid(`${filename}: the new text is the text there is; nothing to change`);
      created = !before;
      version = contentVersion(content);
      return {
        writes: [{ filename, content, expectedEtag: before?.etag ?? null, kind: before ? 'updated' : 'created' }],
        preimages: before ? [{ filename, path: [], content: before.content }] : [],
        revision: { action: 'write', by: caller.agent, reason, files: [{ filename, existed: Boolean(before), version_after: version }] },
      };
    },
    { secret: input.secret === true },
  );
  return { status: created ? 'created' : 'ok', space_id: spaceId, revision_id: id, filename, version, ...keptOut(kept), ...secretKept(input.secret) };
}
