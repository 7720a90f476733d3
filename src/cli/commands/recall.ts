import { homedir } from 'node:os';
import { projectIdentity } from '../../config/project-identity.js';
import type { IndexProgress } from '../../core/recall/space-index.js';
import { invalid } from '../../shared/errors.js';
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
  const result = await core.recall.context(
    caller,
    { space_id: spaceId === '.' ? projectSpace(session) : spaceId, max_tokens: options.maxTokens, ...(words.length > 0 ? { query: words.join(' ') } : {}) },
    showIndexing(progress),
  );
  if (!options.hook) return result;
  process.stdout.write(`${result.text.trimEnd()}\n`);
  return null;
}

/**
 * The project's own space: LIVE_MEM_SPACE, else the project of the working folder (config/project-identity.ts);
 * none in `/` or the home folder, refused saying how to name one.
 */
function projectSpace({ settings }: Session): string {
  if (settings.space) return settings.space;
  const found = projectIdentity(process.cwd(), homedir());
  if ('space_id' in found) return found.space_id;
  throw invalid(`'.' is the project of the working folder, and there is none (${found.none}): name the space, or set LIVE_MEM_SPACE`);
}

export const historyList = ({ core, caller }: Session, spaceId: string, options: { limit: number; before?: string }) =>
  core.recall.historyList(caller, { space_id: spaceId, limit: options.limit, ...(options.before !== undefined ? { before: options.before } : {}) });

export const historyShow = ({ core, caller }: Session, spaceId: string, consolidationId: string) =>
  core.recall.historyRead(caller, { space_id: spaceId, consolidation_id: consolidationId });

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
