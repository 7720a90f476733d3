import { invalid, LiveMemError, unconfirmed } from '../../shared/errors.js';
import { hasForeignLineEndings, normalizeLineEndings } from '../../shared/line-endings.js';
import { isoSeconds } from '../../shared/time.js';
import { contentVersion, readBankFiles } from '../bank/bank-files.js';
import { authorize, type Caller } from '../caller.js';
import type { FileWrite } from '../commit/record.js';
import { applyCommit, writeCommit } from '../commit/commit.js';
import { type CommitRecord, historyId, type Preimage, type RevisionInfo } from '../commit/record.js';
import { slicer } from '../../shared/yield.js';
import { applySectionEditsInSlices, sectionEdit } from '../markdown/edit.js';
import { ReplyFormatError } from '../../llm/reply-json.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import type { ChangedFile } from '../events.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import type { Corpus } from '../note/corpus.js';
import type { Redacted } from '../redact/redact.js';
import { requireSpace } from '../space-meta.js';
import { checkEditCount, isStoredBankFilename, quoteName, validateReason, validateSpaceId } from '../validate.js';
import { checkedRules, checkedText, readTargets, redactLines, removedLines, revisionToRevert, targetName, targetOf, withoutRemovedLines } from './targets.js';

export interface BankWriteInput {
  space_id: string;
  filename: string;
  /** The whole new text; or `edits`, section edits as consolidation plans use them. */
  content?: string;
  edits?: unknown[];
  /** The version (bank_read's `version`) the caller read; required to change a file that exists. */
  if_match?: string;
  reason?: string;
  /** What this removes was a secret: the text kept in history has the removed lines redacted too. */
  secret?: boolean;
}

/** How a revision commits: `secret` (its pre-images lose the lines it removes), `then` (run under the lease once applied). */
interface CommitOptions {
  secret?: boolean;
  then?: () => Promise<void>;
}

/** What one revision writes, as its `plan` computes it under the space's lease. */
interface Planned {
  writes: FileWrite[];
  preimages: Preimage[];
  rules?: CommitRecord['rules'];
  revision: RevisionInfo;
}

export interface RevisionResult {
  status: 'ok' | 'created' | 'deleted';
  space_id: string;
  revision_id: string;
  /** The new text's version (bank_write, space_update_rules): the next correction's if_match. */
  version?: string;
  [field: string]: unknown;
}

/**
 * Corrections by people: a bank file (or the synthesis, named SYNTHESIS_FILE) written or deleted,
 * the rules changed, an earlier correction reverted. Each is a compare-and-swap against the version
 * the caller read (so a consolidation that committed in between is never silently overwritten), runs
 * under the space's lease, and commits through consolidation's one protocol (commit.ts, `kind:
 * 'revision'`), keeping every file's previous text in history: `history_list` shows who did what and
 * why, `history_read` the text before, and `bank_revert` puts it back. A correction that says it
 * removed a secret (`secret`) keeps that previous text without the lines it removed.
 */
export function createRevisionService(
  context: CoreContext,
  deps: { corpus: Corpus; onCommitted?: (spaceId: string, files: ChangedFile[], synthesis: boolean) => void },
) {
  const { storage } = context;

  /**
   * Commits one revision under the space's lease; `plan` reads the store under it and returns what to
   * write (null: nothing to, no revision); `then` runs under the lease once it is applied. With `secret`, what the
   * revision keeps of the earlier texts (pre-images, rules before) loses the lines the new ones no longer have;
   * rolling it forward deletes the index snapshots too (commit.ts).
   */
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned>, options?: CommitOptions): Promise<string>;
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned | null>, options?: CommitOptions): Promise<string | null>;
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned | null>, options: CommitOptions = {}): Promise<string | null> {
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
        const copies = await synthesisCopiesHolding(spaceId, removed.get(SYNTHESIS_FILE));
        revision = {
          ...revision,
          secret: true,
          ...(revision.rules && rules ? { rules: { ...revision.rules, before: withoutRemovedLines(revision.rules.before, rules.content) } } : {}),
          ...(copies.length > 0 ? { synthesis_copies: copies } : {}),
        };
      }
      const now = context.clock();
      const record: CommitRecord = {
        id: historyId(context, now),
        space_id: spaceId,
        kind: 'revision',
        committed_at: isoSeconds(now),
        notes: [],
        time_range: { oldest: null, newest: null },
        writes,
        metrics: { by: caller.agent, files: writes.length },
        preimages,
        ...(rules ? { rules } : {}),
        revision,
      };
      await context.fault('before-commit');
      await held.stillHeld();
      await writeCommit(context, record);
      await context.fault('after-commit');
      await applyCommit(context, record);
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
  const synthesisCopiesHolding = async (spaceId: string, removed: ReadonlySet<string> | undefined): Promise<string[]> => {
    if (!removed || removed.size === 0) return [];
    const records = (await deps.corpus.history(spaceId)).filter((record) => record.kind === 'consolidation');
    return records
      .filter((record) => {
        const copy = (record as { synthesis?: { content?: unknown } }).synthesis?.content;
        return typeof copy === 'string' && copy.split('\n').some((line) => removed.has(line.trim()));
      })
      .map((record) => record.id);
  };

  const begin = async (caller: Caller, input: { space_id: string; reason?: string }) => {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'admin', spaceId);
    const reason = validateReason(input.reason);
    await requireSpace(context, spaceId);
    return { spaceId, reason };
  };

  /** `conflict` unless the caller read the version there is now (`null`: the caller expects no file). */
  const checkVersion = (what: string, current: string | undefined, ifMatch: string | undefined, spaceId: string) => {
    if (current === undefined) {
      if (ifMatch !== undefined && ifMatch !== '') {
        throw new LiveMemError('conflict', `${what} does not exist (any more) in space '${spaceId}': it was not changed`, { space_id: spaceId });
      }
      return;
    }
    if (ifMatch === undefined || ifMatch === '') {
      throw invalid(`${what} exists: pass if_match, the version you read (bank_read and space_rules give it), so a change made since is never overwritten`);
    }
    if (ifMatch !== contentVersion(current)) {
      throw new LiveMemError(
        'conflict',
        `${what} changed since you read it (version ${ifMatch}, now ${contentVersion(current)}): it was not changed; read it again and redo your change`,
        { space_id: spaceId, version: contentVersion(current) },
      );
    }
  };

  return {
    /** Writes a bank file (or the synthesis) whole (`content`) or by section edits (`edits`); creates it when it does not exist. */
    async write(caller: Caller, input: BankWriteInput): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
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
      const id = await commit(
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
    },

    /** Deletes a bank file (its text kept in history: `bank_revert` brings it back). */
    async delete(
      caller: Caller,
      input: { space_id: string; filename: string; confirm?: boolean; if_match?: string; reason?: string; secret?: boolean },
    ): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      if (typeof input.filename !== 'string' || !isStoredBankFilename(input.filename)) throw invalid(`invalid bank filename ${quoteName(input.filename)}`);
      const filename = input.filename;
      if (input.confirm !== true)
        throw unconfirmed(
          `deleting ${what(filename)} removes it (its text stays in history${input.secret === true ? ', but for the secret' : ''}; bank_revert brings it back)`,
        );
      const id = await commit(
        caller,
        spaceId,
        async () => {
          const before = targetOf(await readTargets(context, spaceId), filename);
          if (!before) throw new LiveMemError('not_found', `${what(filename)} does not exist in space '${spaceId}'`, { space_id: spaceId, filename });
          if (input.if_match) checkVersion(what(filename), before.content, input.if_match, spaceId);
          return {
            writes: [{ filename, content: '', expectedEtag: before.etag, kind: 'deleted' }],
            preimages: [{ filename, path: [], content: before.content }],
            revision: { action: 'delete', by: caller.agent, reason, files: [{ filename, existed: true, version_after: null }] },
          };
        },
        { secret: input.secret === true },
      );
      return { status: 'deleted', space_id: spaceId, revision_id: id, filename, ...secretKept(input.secret) };
    },

    /** Replaces the space's rules (which bank files exist and what each holds; budgets, append-only files). */
    async updateRules(
      caller: Caller,
      input: { space_id: string; rules: string; if_match?: string; reason?: string; secret?: boolean },
    ): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      const redaction = checkedRules(context, typeof input.rules === 'string' ? input.rules : '');
      const rules = redaction.text;
      const version = contentVersion(rules);
      const id = await commit(
        caller,
        spaceId,
        async () => {
          const stored = await storage.get(spaceKeys(spaceId).rules);
          const before = stored?.body.toString('utf8');
          checkVersion('the rules', before ?? '', input.if_match, spaceId);
          if (before === rules) throw invalid('the new rules are the rules there are; nothing to change');
          return {
            writes: [],
            preimages: [],
            rules: { content: rules, expectedEtag: stored?.etag ?? null },
            revision: { action: 'rules', by: caller.agent, reason, files: [], rules: { before: before ?? '', version_after: version } },
          };
        },
        { secret: input.secret === true },
      );
      return { status: 'ok', space_id: spaceId, revision_id: id, version, ...keptOut(redaction), ...secretKept(input.secret) };
    },

    /**
     * Normalises the line endings of a space's Markdown (shared/line-endings.ts) — bank files and
     * rules as one revision (each file's text before kept in history), the synthesis by a
     * compare-and-swap under the same lease — for text an older version, a hand or a planted file
     * left with `\r\n`, `\r` or a byte-order mark (`doctor --fix`). Only line endings change;
     * nothing is masked or refused. Says what it normalised; a revision only when a file or the rules changed.
     */
    async normalizeLineEndings(caller: Caller, input: { space_id: string; reason?: string }) {
      const { spaceId, reason } = await begin(caller, input);
      const keys = spaceKeys(spaceId);
      const done = { files: [] as string[], rules: false, synthesis: false };
      const id = await commit(
        caller,
        spaceId,
        async () => {
          const bank = await readBankFiles(context, spaceId);
          const writes: FileWrite[] = [];
          const preimages: Preimage[] = [];
          const files: RevisionInfo['files'] = [];
          for (const [filename, file] of [...bank].sort(([a], [b]) => (a < b ? -1 : 1))) {
            if (!hasForeignLineEndings(file.content)) continue;
            const content = normalizeLineEndings(file.content);
            writes.push({ filename, content, expectedEtag: file.etag, kind: 'updated' });
            preimages.push({ filename, path: [], content: file.content });
            files.push({ filename, existed: true, version_after: contentVersion(content) });
          }
          const stored = await storage.get(keys.rules);
          const before = stored?.body.toString('utf8');
          const rules = before !== undefined && hasForeignLineEndings(before) ? normalizeLineEndings(before) : undefined;
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
            await storage.put(keys.synthesis, normalizeLineEndings(text), { ifMatch: synthesis.etag, contentType: 'text/markdown; charset=utf-8' });
            done.synthesis = true;
          },
        },
      );
      return { status: 'ok' as const, space_id: spaceId, ...(id ? { revision_id: id } : {}), ...done };
    },

    /**
     * Puts back what a revision changed, as a new revision: each file its text before (a file the
     * revision created is deleted), the rules theirs. Only while every file is still as the revision
     * left it: a change made since (a consolidation, another correction) is never undone silently.
     */
    async revert(caller: Caller, input: { space_id: string; revision_id: string; confirm?: boolean; reason?: string }): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      const rid = typeof input.revision_id === 'string' ? input.revision_id : '';
      if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(rid)) throw invalid(`invalid revision_id ${JSON.stringify(rid)}`);
      if (input.confirm !== true) throw unconfirmed(`reverting revision ${rid} puts back the text every file had before it`);
      const target = await deps.corpus.record(spaceId, rid);
      if (!target) throw new LiveMemError('not_found', `no revision '${rid}' in space '${spaceId}'`, { space_id: spaceId, revision_id: rid });
      if (target.kind !== 'revision' || !target.revision) {
        throw invalid(
          `${rid} is a ${target.kind}, not a revision: only a person's correction can be reverted (bank_write puts back any earlier text history_read shows)`,
        );
      }
      const info = revisionToRevert(target.revision, rid);
      const before = new Map((await deps.corpus.historyPreimages(spaceId, rid)).map((preimage) => [preimage.filename, preimage.content]));
      const keys = spaceKeys(spaceId);
      const redacted: Redacted[] = [];
      // What a revision record says was there is input like a person's text (an import may have brought
      // the record): every text put back passes the checks a write's does, its name too (targets.ts).
      const checked = <T>(check: () => T): T => {
        try {
          return check();
        } catch (error) {
          if (error instanceof LiveMemError && error.code === 'invalid_input')
            throw invalid(`revision ${rid} cannot be reverted: ${error.message}; nothing was reverted`, error.data);
          throw error;
        }
      };
      const id = await commit(caller, spaceId, async () => {
        const targets = await readTargets(context, spaceId);
        const writes: FileWrite[] = [];
        const preimages: Preimage[] = [];
        const files: RevisionInfo['files'] = [];
        for (const file of info.files) {
          const now = targetOf(targets, file.filename);
          if ((now ? contentVersion(now.content) : null) !== file.version_after) {
            throw new LiveMemError(
              'conflict',
              `${what(file.filename)} changed since revision ${rid} (by a consolidation or another correction): nothing was reverted; history_read shows its earlier text, bank_write can put it back`,
              { space_id: spaceId, filename: file.filename },
            );
          }
          const previous = before.get(file.filename);
          if (file.existed && previous === undefined)
            throw new LiveMemError('storage_error', `history ${rid} has lost the earlier text of ${file.filename}`, { damaged: true });
          if (now) preimages.push({ filename: file.filename, path: [], content: now.content });
          if (previous === undefined) {
            writes.push({ filename: file.filename, content: '', expectedEtag: now?.etag ?? null, kind: 'deleted' });
            files.push({ filename: file.filename, existed: Boolean(now), version_after: null });
            continue;
          }
          const filename = checked(() => targetName(file.filename));
          if (filename !== file.filename) throw invalid(`revision ${rid} names ${quoteName(file.filename)}, not a name as stored: nothing was reverted`);
          const text = checked(() => checkedText(context, targets, filename, previous));
          redacted.push(text);
          if (!now && filename !== SYNTHESIS_FILE) targets.bank.set(filename, { content: text.text, etag: '' }); // counted by the next file's checks
          writes.push({ filename, content: text.text, expectedEtag: now?.etag ?? null, kind: now ? 'updated' : 'created' });
          files.push({ filename, existed: Boolean(now), version_after: contentVersion(text.text) });
        }
        let rules: CommitRecord['rules'];
        let rulesInfo: RevisionInfo['rules'];
        if (info.rules) {
          const current = await storage.get(keys.rules);
          const text = current?.body.toString('utf8') ?? '';
          if (contentVersion(text) !== info.rules.version_after) {
            throw new LiveMemError('conflict', `the rules changed since revision ${rid}: nothing was reverted`, { space_id: spaceId });
          }
          const putBack = checked(() => checkedRules(context, (info.rules as { before: string }).before));
          redacted.push(putBack);
          rules = { content: putBack.text, expectedEtag: current?.etag ?? null };
          rulesInfo = { before: text, version_after: contentVersion(putBack.text) };
        }
        return {
          writes,
          preimages,
          ...(rules ? { rules } : {}),
          revision: { action: 'revert', by: caller.agent, reason, reverts: rid, files, ...(rulesInfo ? { rules: rulesInfo } : {}) },
        };
      });
      const kinds = new Map<string, number>();
      for (const { kind, count } of redacted.flatMap((text) => text.redacted)) kinds.set(kind, (kinds.get(kind) ?? 0) + count);
      return {
        status: 'ok',
        space_id: spaceId,
        revision_id: id,
        reverted: rid,
        files: info.files.map((file) => file.filename),
        rules: info.rules !== undefined,
        ...(kinds.size > 0 ? { redacted: [...kinds].map(([kind, count]) => ({ kind, count })) } : {}),
      };
    },
  };
}

/** How a file of a correction is named in messages: the synthesis, or a bank file. */
const what = (filename: string): string => (filename === SYNTHESIS_FILE ? 'the synthesis' : `bank file ${filename}`);

export type RevisionService = ReturnType<typeof createRevisionService>;

/** What the answer says was kept out of a person's text (never the secret itself), when anything was. */
const keptOut = (redaction: Redacted | undefined) => ({
  ...(redaction && redaction.redacted.length > 0 ? { redacted: redaction.redacted } : {}),
  ...(redaction && redaction.private_removed > 0 ? { private_removed: redaction.private_removed } : {}),
});

/** What the answer says of a correction's `secret`: the removed lines are kept nowhere. */
const secretKept = (secret: boolean | undefined) =>
  secret === true ? { secret: true, message: 'the lines removed are kept nowhere: history keeps the earlier text without them' } : {};
