import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { projectOfArgument } from '../../config/project-argument.js';
import { projectIdentity } from '../../config/project-identity.js';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { type CommandDef, integer, REASON, SECRET } from '../command.js';
import type { Session } from '../open.js';
import { textFrom } from './bank.js';

export async function spaceCreate(
  { core, caller }: Session,
  spaceId: string,
  options: { description?: string; owner?: string; rules?: string; rulesFile?: string },
) {
  if (options.rules !== undefined && options.rulesFile !== undefined) throw invalid('give --rules or --rules-file, not both');
  const rules = options.rulesFile !== undefined ? await readFile(options.rulesFile, 'utf8') : options.rules;
  return core.spaces.create(caller, {
    space_id: spaceId,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(rules !== undefined ? { rules } : {}),
  });
}

export const spaceList = ({ core, caller }: Session) => core.spaces.list(caller);
export const spaceInfo = ({ core, caller }: Session, spaceId: string) => core.spaces.info(caller, { space_id: spaceId });
export const spaceRules = ({ core, caller }: Session, spaceId: string) => core.spaces.rules(caller, { space_id: spaceId });
export const spaceSummary = ({ core, caller }: Session, spaceId: string) => core.spaces.summary(caller, { space_id: spaceId });

export const spaceUpdate = ({ core, caller }: Session, spaceId: string, options: { description?: string; owner?: string; llmDailyTokens?: number }) =>
  core.spaces.update(caller, {
    space_id: spaceId,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.llmDailyTokens !== undefined ? { llm_daily_tokens: options.llmDailyTokens } : {}),
  });

export const spaceDelete = ({ core, caller }: Session, spaceId: string, options: { yes?: boolean }) =>
  core.spaces.delete(caller, { space_id: spaceId, confirm: options.yes === true });

/** `space update-rules SPACE [FILE]`: the whole new rules (a file, or standard input), against `--if-match` (`space rules --json` gives it). */
export async function spaceUpdateRules(
  { core, caller }: Session,
  spaceId: string,
  file: string | undefined,
  options: { ifMatch?: string; reason?: string; secret?: boolean },
) {
  const rules = await textFrom(file, 'the new rules');
  return core.revisions.updateRules(caller, {
    space_id: spaceId,
    rules,
    ...(options.ifMatch !== undefined ? { if_match: options.ifMatch } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.secret === true ? { secret: true } : {}),
  });
}

/**
 * `space bind [SPACE] [--new] [--project P]`, in the project or naming it: which space the project
 * uses, decided once for every client (core/space/project-space.ts). SPACE is the project's older
 * space, named by the rule before (`webapp`): it records this project and is its space from then on.
 * --new makes the project's own space instead (`acme-webapp-<hash>`), recording the project; the
 * older one is left to its owner. --project names the project as a call's `project` argument does
 * (a folder or a git remote): a team server's operator, who has no clone, makes its space this way.
 */
export async function spaceBind({ core, caller }: Session, spaceId: string | undefined, options: { new?: boolean; project?: string }) {
  const found =
    options.project === undefined ? projectIdentity(process.cwd(), homedir()) : projectOfArgument(options.project, { home: homedir(), folders: true });
  if (!('space_id' in found))
    throw invalid(
      options.project === undefined ? `no project here (${found.none}): run it in the project's folder, or give --project` : `--project: ${found.none}`,
    );
  const { project, legacy_id: legacy } = found;
  if (project === undefined || legacy === undefined) throw invalid(`this project's space is '${found.space_id}' (${found.from}): no older space to bind`);
  if (options.new === true) {
    if (spaceId !== undefined) throw invalid('give a space to bind or --new, not both');
    try {
      return await core.spaces.create(caller, { space_id: found.space_id, project, description: `the space of ${project}` });
    } catch (error) {
      if (!isLiveMemError(error, 'already_exists')) throw error;
      return core.spaces.bindProject(caller, { space_id: found.space_id, project });
    }
  }
  if (spaceId === undefined) throw invalid(`name the space to bind ('${legacy}', this project's older space), or give --new to start '${found.space_id}'`);
  // An older space is named like the former id but for case (project-space.ts).
  if (spaceId.toLowerCase() !== legacy.toLowerCase() && spaceId !== found.space_id)
    throw invalid(
      `'${spaceId}' is not this project's space: its older space is '${legacy}', its own '${found.space_id}' (another space: pin it with LIVE_MEM_SPACE)`,
    );
  return core.spaces.bindProject(caller, { space_id: spaceId, project });
}

export const spaceCommands: CommandDef = {
  name: 'space',
  description: 'create, inspect and delete memory spaces',
  commands: [
    {
      name: 'create <space_id>',
      description: 'create a space (with the standard memory-bank rules unless given others)',
      options: [
        { flags: '-d, --description <text>', description: 'what the space is for' },
        { flags: '--owner <name>', description: 'who owns it (informative)' },
        { flags: '--rules <markdown>', description: 'the rules, inline' },
        { flags: '--rules-file <file>', description: 'the rules, from a Markdown file' },
      ],
      run: spaceCreate,
      examples: ['live-mem space create my-project -d "The web shop"'],
    },
    { name: 'list', description: 'list spaces', run: spaceList, view: 'spaces' },
    { name: 'info <space_id>', description: 'details of a space', run: spaceInfo, view: 'spaceFields' },
    { name: 'rules <space_id>', description: 'print the rules of a space', run: spaceRules, view: 'content' },
    { name: 'summary <space_id>', description: 'info, rules, synthesis and bank in one', run: spaceSummary, view: 'spaceFields' },
    {
      name: 'update <space_id>',
      description: "change the description, the owner or the space's daily model-token cap",
      options: [
        { flags: '-d, --description <text>', description: 'new description' },
        { flags: '--owner <name>', description: 'new owner' },
        {
          flags: '--llm-daily-tokens <n>',
          description: 'model tokens the space may spend per UTC day: a writer may only lower the cap in force, an admin set any (0 = no cap for it)',
          parse: integer,
        },
      ],
      run: spaceUpdate,
    },
    {
      name: 'update-rules <space_id> [file]',
      description: 'replace the rules (from a file, or standard input), recorded in history as a revision (admin)',
      options: [
        { flags: '--if-match <version>', description: 'the version the rules had when you read them (`live-mem space rules ID --json`)' },
        REASON,
        SECRET,
      ],
      help: '\nExample:\n  live-mem space update-rules my-project rules.md --if-match "$(live-mem space rules my-project --json | jq -r .version)" --reason "add a budget"',
      run: spaceUpdateRules,
    },
    {
      name: 'bind [space_id]',
      description:
        "in a project (or the one --project names): use its older space (named by the repository alone, before owner and host were part of a project's space) from now on, or --new to start the project's own",
      options: [
        { flags: '--new', description: "start the project's own space (owner, repository and a hash) instead" },
        {
          flags: '--project <folder|remote>',
          description: 'the project, instead of the current folder: a folder, or a git remote such as github.com/acme/webapp',
        },
      ],
      run: spaceBind,
      examples: ['live-mem space bind webapp', 'live-mem space bind --new', 'live-mem space bind --new --project github.com/acme/webapp'],
    },
    {
      name: 'delete <space_id>',
      description: 'delete a space and all its data (irreversible)',
      options: [{ flags: '-y, --yes', description: 'confirm the deletion' }],
      run: spaceDelete,
    },
  ],
};
