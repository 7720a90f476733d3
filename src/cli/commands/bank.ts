import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { invalid } from '../../shared/errors.js';
import type { Session } from '../open.js';
import { readStdin } from '../stdin.js';

export const bankList = ({ core, caller }: Session, spaceId: string) => core.bank.list(caller, { space_id: spaceId });
export const bankRead = ({ core, caller }: Session, spaceId: string, filename: string) => core.bank.read(caller, { space_id: spaceId, filename });
export const bankExplain = ({ core, caller }: Session, spaceId: string, filename: string, section: string | undefined, options: { limit: number }) =>
  core.sources.explain(caller, { space_id: spaceId, filename, limit: options.limit, ...(section ? { section } : {}) });
export const bankReadAll = ({ core, caller }: Session, spaceId: string) => core.bank.readAllFor(caller, { space_id: spaceId });

interface RevisionOptions {
  ifMatch?: string;
  reason?: string;
  yes?: boolean;
  secret?: boolean;
}

/** A text from a file, or from standard input when the file is absent or '-'. */
export const textFrom = (file: string | undefined, what: string): Promise<string> =>
  file !== undefined && file !== '-' ? readFile(file, 'utf8') : readStdin(what);

const revisionFields = (options: RevisionOptions) => ({
  ...(options.ifMatch !== undefined ? { if_match: options.ifMatch } : {}),
  ...(options.reason !== undefined ? { reason: options.reason } : {}),
  ...(options.secret === true ? { secret: true } : {}),
});

/** `bank write SPACE FILE [TEXT_FILE]`: the whole new text, against `--if-match` (the version `bank read --json` gives). */
export async function bankWrite({ core, caller }: Session, spaceId: string, filename: string, file: string | undefined, options: RevisionOptions) {
  const content = await textFrom(file, `the new text of ${filename}`);
  return core.revisions.write(caller, { space_id: spaceId, filename, content, ...revisionFields(options) });
}

/**
 * `bank edit SPACE FILE`: the file in $VISUAL / $EDITOR, written back against the version it was read
 * at, so a consolidation that commits while the person edits is never overwritten (`conflict`).
 */
export async function bankEdit({ core, caller }: Session, spaceId: string, filename: string, options: RevisionOptions) {
  const editor = process.env.VISUAL || process.env.EDITOR;
  if (!editor) throw invalid('set VISUAL or EDITOR to the editor to use (or write the file with `live-mem bank write`)');
  const read = await core.bank.read(caller, { space_id: spaceId, filename });
  const dir = await mkdtemp(path.join(tmpdir(), 'live-mem-edit-'));
  try {
    const draft = path.join(dir, path.basename(read.filename));
    await writeFile(draft, read.content, { mode: 0o600 });
    const { status, error } = runEditor(editor, draft);
    if (error || status !== 0) throw invalid(`the editor (${editor}) failed${status !== null ? ` with exit code ${status}` : ''}: nothing was changed`);
    const content = await readFile(draft, 'utf8');
    if (content === read.content) return { status: 'ok', space_id: spaceId, filename: read.filename, message: 'unchanged: nothing was written' };
    return core.revisions.write(caller, {
      space_id: spaceId,
      filename: read.filename,
      content,
      if_match: read.version,
      ...revisionFields({ reason: options.reason, secret: options.secret }),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the person's editor on `file` as git does: `$EDITOR` is shell words (`code --wait`, `vim -u
 * NONE`, a quoted path), so it is run by `sh -c '<editor> "$@"' <editor> <file>`, where the file is
 * a positional parameter (never part of the command string, so no character of its path is read by
 * the shell) and the one argument after the editor's own words. Windows has no sh: cmd is given the
 * file quoted (a temp path never holds `"`).
 */
function runEditor(editor: string, file: string) {
  return process.platform === 'win32'
    ? spawnSync(`${editor} "${file}"`, { stdio: 'inherit', shell: true })
    : spawnSync('/bin/sh', ['-c', `${editor} "$@"`, editor, file], { stdio: 'inherit' });
}

export const bankDelete = ({ core, caller }: Session, spaceId: string, filename: string, options: RevisionOptions) =>
  core.revisions.delete(caller, { space_id: spaceId, filename, confirm: options.yes === true, ...revisionFields(options) });

export const bankRevert = ({ core, caller }: Session, spaceId: string, revisionId: string, options: RevisionOptions) =>
  core.revisions.revert(caller, { space_id: spaceId, revision_id: revisionId, confirm: options.yes === true, ...revisionFields({ reason: options.reason }) });
