import { invalid, LiveMemError, unconfirmed } from '../../shared/errors.js';
import { hasForeignLineEndings, normalizeLineEndings } from '../../shared/line-endings.js';
import { isoSeconds } from '../../shared/time.js';
import { contentVersion, readBankFiles } from '../bank/bank-files.js';
import { authorize, type Caller } from '../caller.js';
import type { FileWrite } from '../consolidation/apply-plan.js';
import { applyCommit, type CommitRecord, historyId, type Preimage, type RevisionInfo, writeCommit } from '../consolidation/commit.js';
import { applySectionEdit } from '../consolidation/markdown.js';
import { PlanFormatError, sectionEdit } from '../consolidation/plan.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../consolidation/space-lock.js';
import type { CoreContext } from '../context.js';
import type { ChangedFile } from '../events.js';
import { spaceKeys } from '../layout.js';
import type { Corpus } from '../recall/corpus.js';
import { requireSpace } from '../space/meta.js';
import { MAX_RULES_CHARS } from '../space/space-service.js';
import { foldedBankName, isStoredBankFilename, quoteName, validateBankFilename, validateReason, validateSpaceId } from '../validate.js';

export interface BankWriteInput {
  space_id: string;
  filename: string;
  /** The whole new text; or `edits`, section edits as consolidation plans use them. */
  content?: string;
  edits?: unknown[];
  /** The version (bank_read's `version`) the caller read; required to change a file that exists. */
  if_match?: string;
  reason?: string;
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
 * Corrections by people: a bank file written or deleted, the rules changed, an earlier correction
 * reverted. Each is a compare-and-swap against the version the caller read (so a consolidation that
 * committed in between is never silently overwritten), runs under the space's lease, and commits
 * through consolidation's one protocol (commit.ts, `kind: 'revision'`), keeping every file's previous
 * text in history: `history_list` shows who did what and why, `history_read` the text before, and
 * `bank_revert` puts it back.
 */
export function createRevisionService(context: CoreContext, deps: { corpus: Corpus; onCommitted?: (spaceId: string, files: ChangedFile[]) => void }) {
  const { storage } = context;

  /**
   * Commits one revision under the space's lease; `plan` reads the store under it and returns what to
   * write (null: nothing to, no revision). `then` runs under the lease once it is applied.
   */
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned>): Promise<string>;
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned | null>, then?: () => Promise<void>): Promise<string | null>;
  async function commit(caller: Caller, spaceId: string, plan: () => Promise<Planned | null>, then?: () => Promise<void>): Promise<string | null> {
    const held = await lockSpace(context, spaceId, caller, 'revision', { waitMs: PERSON_LEASE_WAIT_MS });
    try {
      const planned = await plan();
      if (!planned) {
        await then?.();
        return null;
      }
      const { writes, preimages, rules, revision } = planned;
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
          writes.map((w) => ({ filename: w.filename, kind: w.kind })),
        );
      context.logger.info(`revision ${record.id} of '${spaceId}' by ${caller.agent}: ${revision.action}`, { files: writes.map((w) => w.filename) });
      await then?.();
      return record.id;
    } finally {
      await held.release();
    }
  }

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
    /** Writes a bank file whole (`content`) or by section edits (`edits`); creates it when it does not exist. */
    async write(caller: Caller, input: BankWriteInput): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      const filename = validateBankFilename(input.filename);
      const hasContent = typeof input.content === 'string';
      if (hasContent === Array.isArray(input.edits)) throw invalid('give either content (the whole file) or edits (section edits), not both and not neither');
      const edits = (input.edits ?? []).map((raw, i) => {
        try {
          return sectionEdit(raw, `edits[${i}]`);
        } catch (error) {
          if (error instanceof PlanFormatError) throw invalid(error.message);
          throw error;
        }
      });
      let created = false;
      let version = '';
      const id = await commit(caller, spaceId, async () => {
        const bank = await readBankFiles(context, spaceId);
        const before = bank.get(filename);
        checkVersion(`bank file ${filename}`, before?.content, input.if_match, spaceId);
        if (!before && !hasContent)
          throw new LiveMemError('not_found', `bank file '${filename}' does not exist in space '${spaceId}': create it with content`, {
            space_id: spaceId,
            filename,
          });
        // A person's text was held to what a note is on the way in: no secret, no <private> span (redact/stored-text.ts);
        // its line endings are made those every writer stores (a Windows file given whole; edits normalise their own).
        let content = hasContent ? normalizeLineEndings(input.content as string) : (before as { content: string }).content;
        for (const edit of edits) content = applySectionEdit(content, edit, filename);
        if (content.trim() === '') throw invalid(`${filename}: the new text is empty; to remove the file, use bank_delete`);
        if (!before) {
          if (bank.size >= context.consolidation.maxBankFiles) throw invalid(`the bank holds ${bank.size} files, its most (LIVE_MEM_BANK_MAX_FILES)`);
          const twin = [...bank.keys()].find((name) => foldedBankName(name) === foldedBankName(filename));
          if (twin) throw invalid(`${quoteName(filename)} differs from ${quoteName(twin)} only by case: they are one file on macOS and Windows`);
        }
        if (before && content === before.content) throw invalid(`${filename}: the new text is the text there is; nothing to change`);
        created = !before;
        version = contentVersion(content);
        return {
          writes: [{ filename, content, expectedEtag: before?.etag ?? null, kind: before ? 'updated' : 'created' }],
          preimages: before ? [{ filename, path: [], content: before.content }] : [],
          revision: { action: 'write', by: caller.agent, reason, files: [{ filename, existed: Boolean(before), version_after: version }] },
        };
      });
      return { status: created ? 'created' : 'ok', space_id: spaceId, revision_id: id, filename, version };
    },

    /** Deletes a bank file (its text kept in history: `bank_revert` brings it back). */
    async delete(
      caller: Caller,
      input: { space_id: string; filename: string; confirm?: boolean; if_match?: string; reason?: string },
    ): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      if (typeof input.filename !== 'string' || !isStoredBankFilename(input.filename)) throw invalid(`invalid bank filename ${quoteName(input.filename)}`);
      if (input.confirm !== true)
        throw unconfirmed(`deleting bank file '${input.filename}' removes it from the bank (its text stays in history; bank_revert brings it back)`);
      const filename = input.filename;
      const id = await commit(caller, spaceId, async () => {
        const before = (await readBankFiles(context, spaceId)).get(filename);
        if (!before) throw new LiveMemError('not_found', `bank file '${filename}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename });
        if (input.if_match) checkVersion(`bank file ${filename}`, before.content, input.if_match, spaceId);
        return {
          writes: [{ filename, content: '', expectedEtag: before.etag, kind: 'deleted' }],
          preimages: [{ filename, path: [], content: before.content }],
          revision: { action: 'delete', by: caller.agent, reason, files: [{ filename, existed: true, version_after: null }] },
        };
      });
      return { status: 'deleted', space_id: spaceId, revision_id: id, filename };
    },

    /** Replaces the space's rules (which bank files exist and what each holds; budgets, append-only files). */
    async updateRules(caller: Caller, input: { space_id: string; rules: string; if_match?: string; reason?: string }): Promise<RevisionResult> {
      const { spaceId, reason } = await begin(caller, input);
      const rules = typeof input.rules === 'string' ? normalizeLineEndings(input.rules) : '';
      if (rules.trim() === '') throw invalid('rules are empty');
      if (rules.length > MAX_RULES_CHARS) throw invalid(`rules have ${rules.length} characters; the limit is ${MAX_RULES_CHARS}`);
      const version = contentVersion(rules);
      const id = await commit(caller, spaceId, async () => {
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
      });
      return { status: 'ok', space_id: spaceId, revision_id: id, version };
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
        async () => {
          const synthesis = await storage.get(keys.synthesis);
          const text = synthesis?.body.toString('utf8');
          if (!synthesis || text === undefined || !hasForeignLineEndings(text)) return;
          // Compare-and-swap: a writer that takes no lease (an older version) is never overwritten.
          await storage.put(keys.synthesis, normalizeLineEndings(text), { ifMatch: synthesis.etag, contentType: 'text/markdown; charset=utf-8' });
          done.synthesis = true;
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
      const info = target.revision;
      const before = new Map((await deps.corpus.historyPreimages(spaceId, rid)).map((preimage) => [preimage.filename, preimage.content]));
      const keys = spaceKeys(spaceId);
      const id = await commit(caller, spaceId, async () => {
        const bank = await readBankFiles(context, spaceId);
        const writes: FileWrite[] = [];
        const preimages: Preimage[] = [];
        const files: RevisionInfo['files'] = [];
        for (const file of info.files) {
          const now = bank.get(file.filename);
          if ((now ? contentVersion(now.content) : null) !== file.version_after) {
            throw new LiveMemError(
              'conflict',
              `bank file ${file.filename} changed since revision ${rid} (by a consolidation or another correction): nothing was reverted; history_read shows its earlier text, bank_write can put it back`,
              { space_id: spaceId, filename: file.filename },
            );
          }
          const previous = before.get(file.filename);
          if (file.existed && previous === undefined)
            throw new LiveMemError('storage_error', `history ${rid} has lost the earlier text of ${file.filename}`, { damaged: true });
          if (now) preimages.push({ filename: file.filename, path: [], content: now.content });
          if (previous === undefined) writes.push({ filename: file.filename, content: '', expectedEtag: now?.etag ?? null, kind: 'deleted' });
          else writes.push({ filename: file.filename, content: previous, expectedEtag: now?.etag ?? null, kind: now ? 'updated' : 'created' });
          files.push({ filename: file.filename, existed: Boolean(now), version_after: previous === undefined ? null : contentVersion(previous) });
        }
        let rules: CommitRecord['rules'];
        let rulesInfo: RevisionInfo['rules'];
        if (info.rules) {
          const current = await storage.get(keys.rules);
          const text = current?.body.toString('utf8') ?? '';
          if (contentVersion(text) !== info.rules.version_after) {
            throw new LiveMemError('conflict', `the rules changed since revision ${rid}: nothing was reverted`, { space_id: spaceId });
          }
          rules = { content: info.rules.before, expectedEtag: current?.etag ?? null };
          rulesInfo = { before: text, version_after: contentVersion(info.rules.before) };
        }
        return {
          writes,
          preimages,
          ...(rules ? { rules } : {}),
          revision: { action: 'revert', by: caller.agent, reason, reverts: rid, files, ...(rulesInfo ? { rules: rulesInfo } : {}) },
        };
      });
      return {
        status: 'ok',
        space_id: spaceId,
        revision_id: id,
        reverted: rid,
        files: info.files.map((file) => file.filename),
        rules: info.rules !== undefined,
      };
    },
  };
}

export type RevisionService = ReturnType<typeof createRevisionService>;
