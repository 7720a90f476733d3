import type { IndexProgress } from '../../core/recall/space-index.js';
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
 * `context SPACE [QUERY...]`; SPACE `.` is the project's own space, as the MCP tools default to it
 * (what a hook names when no space is pinned). With --hook the text alone is printed: it becomes
 * the session's context as it is.
 */
export async function memoryContext(session: Session, spaceId: string, words: string[], options: { maxTokens: number; hook?: boolean }) {
  const { core, caller, progress } = session;
  const result = await core.recall.context(
    caller,
    { space_id: spaceId === '.' ? session.defaultSpace : spaceId, max_tokens: options.maxTokens, ...(words.length > 0 ? { query: words.join(' ') } : {}) },
    showIndexing(progress),
  );
  if (!options.hook) return result;
  process.stdout.write(`${result.text.trimEnd()}\n`);
  return null;
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
