import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createExclusive } from '../../shared/private-file.js';
import { invalid } from '../../shared/errors.js';
import { type CommandDef, integer, REASON, SECRET } from '../command.js';
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
    await createExclusive(draft, read.content, { mode: 0o600 });
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

export const bankCommands: CommandDef = {
  name: 'bank',
  description: 'read the memory bank, and correct it by hand (admin)',
  commands: [
    { name: 'list <space_id>', description: 'list bank files', run: bankList, view: 'bankList' },
    { name: 'read <space_id> <filename>', description: 'print one bank file', run: bankRead, view: 'content' },
    { name: 'read-all <space_id>', description: 'print every bank file', run: bankReadAll, view: 'bankAll' },
    {
      name: 'explain <space_id> <filename> [section]',
      description: 'why the bank says this: the notes a file (or one section, "Top > Sub") was consolidated from, newest first',
      options: [{ flags: '-n, --limit <n>', description: 'most notes to show (1-100)', parse: integer, default: 20 }],
      run: bankExplain,
      view: 'explain',
    },
    {
      name: 'edit <space_id> <filename>',
      description: 'correct a bank file in $VISUAL/$EDITOR; written back only if nobody changed it meanwhile (admin; a revision in history)',
      options: [REASON, SECRET],
      run: bankEdit,
    },
    {
      name: 'write <space_id> <filename> [file]',
      description: 'write a bank file whole (from a file, or standard input), as a revision in history (admin)',
      options: [
        {
          flags: '--if-match <version>',
          description: 'the version the file had when you read it (`live-mem bank read ID FILE --json`); required for an existing file',
        },
        REASON,
        SECRET,
      ],
      help: '\nExample:\n  live-mem bank write my-project decisions.md fixed.md --if-match 3f2a9c0d1e2b4a5f --reason "Postgres was never chosen"',
      run: bankWrite,
    },
    {
      name: 'delete <space_id> <filename>',
      description: 'delete a bank file, as a revision in history (admin; `bank revert` brings it back)',
      options: [
        { flags: '-y, --yes', description: 'confirm the deletion' },
        { flags: '--if-match <version>', description: 'only if the file is still at this version' },
        REASON,
        SECRET,
      ],
      run: bankDelete,
    },
    {
      name: 'revert <space_id> <revision_id>',
      description: 'undo a revision (bank write/edit/delete, space update-rules) while its files are unchanged since (admin)',
      options: [{ flags: '-y, --yes', description: 'confirm' }, REASON],
      run: bankRevert,
    },
  ],
};
