import { mapLimit } from '../../../shared/concurrency.js';
import { callTool, type Result } from '../api.js';
import { count, h, link, scrollBox, time } from '../dom.js';
import { empty, type ViewContext } from './common.js';
import type { HistoryPage } from './history-index.js';

interface SpaceRow {
  space_id: string;
  description: string;
  live_notes_count: number;
  bank_files_count: number;
  /** Set on a damaged space (its meta unreadable): listed, not opened. */
  error?: string;
}

/** #/spaces: every space the caller may read, with its backlog, bank size and last consolidation. */
export async function spacesView(_context: ViewContext): Promise<Node> {
  const { spaces } = await callTool<Result & { spaces: SpaceRow[] }>('space_list');
  if (spaces.length === 0) return h('section', {}, h('h1', {}, 'Spaces'), empty('No space to show: none exists, or this token may read none.'));
  // The newest consolidation of each space: history_list reads records, where space_info would stat every live note.
  // A few at a time: the server answers a token's requests past LIVE_MEM_HTTP_MAX_IN_FLIGHT with 429. A compaction
  // follows the consolidation that grew a file: a few entries reach the consolidation behind it.
  const lasts = await mapLimit(spaces, 4, (space) =>
    space.error
      ? Promise.resolve(undefined)
      : callTool<HistoryPage>('history_list', { space_id: space.space_id, limit: 10 })
          .then((page) => page.consolidations.find((entry) => (entry.kind ?? 'consolidation') === 'consolidation'))
          .catch(() => undefined),
  );
  const rows = spaces.map((space, i) => {
    if (space.error) {
      return h(
        'tr',
        { 'data-space': space.space_id, class: 'broken' },
        h('td', {}, space.space_id),
        h('td', { class: 'description error', colspan: '4' }, `broken: ${space.error}`),
      );
    }
    const last = lasts[i];
    return h(
      'tr',
      { 'data-space': space.space_id },
      h('td', {}, link(space.space_id, 'space', space.space_id, 'live')),
      h('td', { class: 'description' }, space.description),
      h('td', { class: 'num backlog' }, count(space.live_notes_count)),
      // An empty bank has nothing to open: its 0 is text, not a link.
      h('td', { class: 'num bank-count' }, space.bank_files_count > 0 ? link(count(space.bank_files_count), 'space', space.space_id, 'bank') : count(0)),
      h(
        'td',
        { class: 'last' },
        last ? link(time(last.committed_at), 'space', space.space_id, 'history', last.consolidation_id) : h('span', { class: 'muted' }, 'never'),
      ),
    );
  });
  return h(
    'section',
    {},
    h('h1', {}, 'Spaces'),
    scrollBox(
      h(
        'table',
        { class: 'spaces' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Space'),
            h('th', {}, 'Description'),
            h('th', { class: 'num', title: 'live notes waiting for a consolidation' }, 'Backlog'),
            h('th', { class: 'num' }, 'Bank files'),
            h('th', {}, 'Last consolidation'),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
  );
}
