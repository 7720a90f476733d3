import { homedir } from 'node:os';
import { projectIdentity } from '../../config/project-identity.js';
import type { IndexProgress } from '../../core/recall/space-index.js';
import { projectSpace as spaceOfProject } from '../../core/space/project-space.js';
import { invalid } from '../../shared/errors.js';
import { type CommandDef, integer, REASON } from '../command.js';
import { hereCheckout } from '../here.js';
import type { Session } from '../open.js';
import { percent, type ProgressLine } from '../progress.js';

/** The index's catch-up, shown when it is long (a first build of a large space). */
const showIndexing = (progress: ProgressLine) => ({
  onProgress: (event: IndexProgress) =>
    progress.update(
      `indexing ${event.space_id} · ${event.phase === 'history' ? 'consolidations' : 'live notes'} ${event.done}/${event.total} ${percent(event.done, event.total)}`,
    ),
});

const list = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);

export const recall = (
  { core, caller, progress }: Session,
  spaceId: string,
  words: string[],
  options: { limit: number; levels?: string; sources?: string; category?: string; from?: string; since?: string; until?: string },
) => {
  const levels = list(options.levels)?.map(Number);
  const sources = list(options.sources);
  return core.recall.search(
    caller,
    {
      space_id: spaceId,
      query: words.join(' '),
      limit: options.limit,
      ...(levels ? { levels } : {}),
      ...(sources ? { sources } : {}),
      ...(options.category !== undefined ? { category: options.category } : {}),
      ...(options.from !== undefined ? { agent: options.from } : {}),
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.until !== undefined ? { until: options.until } : {}),
    },
    showIndexing(progress),
  );
};

/**
 * `context SPACE [QUERY...]`; SPACE `.` is the project's own space, found as a stdio server finds
 * it without roots (what a hook names when no space is pinned). With --hook the text alone is
 * printed: it becomes the session's context as it is.
 */
export async function memoryContext(session: Session, spaceId: string, words: string[], options: { maxTokens: number; hook?: boolean }) {
  const { core, caller, progress } = session;
  // The notes' anchors are checked against this folder's checkout (a hook runs in the project): labelled, code that moved on ranked after.
  const checkout = await hereCheckout();
  const result = await core.recall.context(
    caller,
    {
      space_id: spaceId === '.' ? await projectSpace(session) : spaceId,
      max_tokens: options.maxTokens,
      ...(words.length > 0 ? { query: words.join(' ') } : {}),
    },
    { ...showIndexing(progress), ...(checkout ? { checkout } : {}) },
  );
  if (!options.hook) return result;
  process.stdout.write(`${result.text.trimEnd()}\n`);
  return null;
}

/**
 * The project's own space: LIVE_MEM_SPACE, else the project of the working folder (config/project-identity.ts)
 * as an MCP server decides it (core/space/project-space.ts: its own space, or an older one bound to
 * it, or a refusal while that is undecided); none in `/` or the home folder, refused saying how to name one.
 */
async function projectSpace({ settings, core }: Session): Promise<string> {
  if (settings.space) return settings.space;
  const found = projectIdentity(process.cwd(), homedir());
  if ('space_id' in found) return (await spaceOfProject(core.context, found)).space_id;
  throw invalid(`'.' is the project of the working folder, and there is none (${found.none}): name the space, or set LIVE_MEM_SPACE`);
}

export const historyList = ({ core, caller }: Session, spaceId: string, options: { limit: number; before?: string }) =>
  core.history.list(caller, { space_id: spaceId, limit: options.limit, ...(options.before !== undefined ? { before: options.before } : {}) });

export const historyShow = ({ core, caller }: Session, spaceId: string, consolidationId: string) =>
  core.history.read(caller, { space_id: spaceId, consolidation_id: consolidationId });

/** `forget SPACE [REFS...] [--query Q] [--yes] [--reason R]`: a dry run unless --yes. */
export const forget = (
  { core, caller }: Session,
  spaceId: string,
  refs: string[],
  options: { query?: string; limit: number; yes?: boolean; reason?: string; purgeBackups?: boolean },
) =>
  core.forget.forget(caller, {
    space_id: spaceId,
    confirm: options.yes === true,
    limit: options.limit,
    purge_backups: options.purgeBackups === true,
    ...(refs.length > 0 ? { refs } : {}),
    ...(options.query !== undefined ? { query: options.query } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
  });

export const recallCommand: CommandDef = {
  name: 'recall <space_id> <query...>',
  description: 'ranked search over every level: live and consolidated notes, bank sections, synthesis, summaries',
  options: [
    { flags: '-n, --limit <n>', description: 'most results (1-100)', parse: integer, default: 10 },
    { flags: '--levels <list>', description: 'only these levels, e.g. 0 (notes) or 1,2 (summaries)' },
    { flags: '--sources <list>', description: 'only these sources: live,history,bank,bank_history,synthesis,summary' },
    { flags: '-c, --category <category>', description: 'only notes of this category' },
    { flags: '--from <agent>', description: 'only notes by this agent' },
    { flags: '--since <datetime>', description: 'from this ISO 8601 date-time on' },
    { flags: '--until <datetime>', description: 'up to this ISO 8601 date-time' },
  ],
  run: recall,
  view: 'hits',
  examples: ['live-mem recall my-project why did we pick postgres'],
};

export const contextCommand: CommandDef = {
  name: 'context <space_id> [query...]',
  description:
    "the memory an agent should load now, within a token budget (recent notes, search hits, summaries); `.` is the project's own space (LIVE_MEM_SPACE, else the project of the working folder)",
  options: [
    { flags: '--max-tokens <n>', description: 'token budget (200-200000)', parse: integer, default: 4000 },
    {
      flags: '--hook',
      description: 'for a session-start hook (setup claude-code --hooks): print the context alone, and nothing at all (exit 0) on any failure',
    },
  ],
  run: memoryContext,
  view: 'context',
  hook: true,
  examples: ['live-mem context my-project "payment retries" --max-tokens 2000'],
};

export const forgetCommand: CommandDef = {
  name: 'forget <space_id> [refs...]',
  description:
    'remove notes for good (note file names, or --query) from live/, history, summaries and the search index, with a receipt; a dry run without --yes (admin)',
  options: [
    { flags: '-q, --query <text>', description: 'instead of file names: forget the notes this finds (live and consolidated)' },
    { flags: '-n, --limit <n>', description: 'with --query: at most this many notes (1-100)', parse: integer, default: 20 },
    { flags: '-y, --yes', description: 'forget them (without it: a dry run, nothing changed)' },
    { flags: '--purge-backups', description: "also rewrite the space's backups without them (files and manifest checksums)" },
    REASON,
  ],
  help: '\nExample:\n  live-mem forget my-project 20260220T180000_alice_observation_1a2b3c4d.md --reason "leaked a customer name"\n  live-mem forget my-project --query "customer acme" --yes',
  run: forget,
  view: 'forget',
};

export const historyCommands: CommandDef = {
  name: 'history',
  description: 'consolidations and the notes they moved out of live/, compactions and the text they rewrote',
  commands: [
    {
      name: 'list <space_id>',
      description: 'consolidations and compactions, newest first',
      options: [
        { flags: '-n, --limit <n>', description: 'most consolidations (1-1000)', parse: integer, default: 20 },
        { flags: '--before <consolidation_id>', description: 'continue after this one' },
      ],
      run: historyList,
      view: 'history',
    },
    {
      name: 'show <space_id> <consolidation_id>',
      description: 'one consolidation and its notes, or a compaction and its pre-images',
      run: historyShow,
      view: 'historyEntry',
    },
  ],
};
