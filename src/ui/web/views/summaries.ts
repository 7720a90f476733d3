import { callTool, type Result } from '../api.js';
import { count, h, link, pager, time } from '../dom.js';
import { empty, spaceHeader, type ViewContext } from './common.js';
import type { Consolidation, HistoryPage } from './history-index.js';

interface CoveredNote {
  ref: string;
  filename: string;
  timestamp: string | null;
  part?: string;
}

/** Up to 1,000 consolidations, newest first: enough to place the notes of a summary. */
async function consolidationsByTime(spaceId: string): Promise<Consolidation[]> {
  return (await callTool<HistoryPage>('history_list', { space_id: spaceId, limit: 1000 })).consolidations;
}

interface SummaryRow {
  id: string;
  level: number;
  sealed: boolean;
  range_start: string;
  range_end: string;
  covers: number;
  preview: string;
}

/** #/space/{id}/summaries[/{summary}]: the levels, each summary with what it covers; one whole, drilling down to its children or notes. */
export async function summariesView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const header = spaceHeader(spaceId, 'summaries');
  const id = context.parts[2];
  if (id) return h('section', {}, header, await summaryDetail(spaceId, id));

  const { summaries } = await callTool<Result & { summaries: SummaryRow[] }>('summaries_list', { space_id: spaceId });
  if (summaries.length === 0) return h('section', {}, header, empty('No summary yet: they are built after consolidations, or with summaries_update.'));
  const levels = [...new Set(summaries.map((s) => s.level))].sort((a, b) => b - a);
  return h(
    'section',
    {},
    header,
    ...levels.map((level) => {
      const rows = summaries.filter((s) => s.level === level);
      return h(
        'div',
        { class: 'level', 'data-level': level },
        h(
          'h2',
          {},
          `Level ${level}`,
          h('span', { class: 'muted' }, ` — ${count(rows.length)} summaries, each over ${level === 1 ? 'notes' : `level-${level - 1} summaries`}`),
        ),
        pager(rows, (row) =>
          h(
            'article',
            { class: 'summary', 'data-summary': row.id },
            h(
              'div',
              { class: 'note-meta' },
              link(row.id, 'space', spaceId, 'summaries', row.id),
              time(row.range_start),
              ' → ',
              time(row.range_end),
              h('span', { class: 'tag' }, `covers ${count(row.covers)}`),
              row.sealed ? h('span', { class: 'tag' }, 'sealed') : h('span', { class: 'tag open' }, 'open'),
            ),
            h('p', { class: 'preview' }, row.preview),
          ),
        ),
      );
    }),
  );
}

async function summaryDetail(spaceId: string, id: string): Promise<Node> {
  const result = await callTool<Result & { summary: Record<string, unknown>; notes?: CoveredNote[]; children?: Array<Record<string, unknown>> }>(
    'summaries_read',
    {
      space_id: spaceId,
      summary_id: id,
    },
  );
  const summary = result.summary;
  const children = result.children ?? [];
  const notes = result.notes ?? [];
  // A level-1 summary names its notes; the consolidation that holds each one is found by its time range (history_list).
  const history = notes.length > 0 ? await consolidationsByTime(spaceId) : [];
  const holder = (timestamp: string | null) =>
    timestamp ? history.find((record) => (record.time_range?.oldest ?? '') <= timestamp && timestamp <= (record.time_range?.newest ?? '')) : undefined;
  const list = (value: unknown) => (Array.isArray(value) ? (value as unknown[]).map(String) : []);
  return h(
    'div',
    { class: 'summary-detail' },
    h('h2', {}, link('Summaries', 'space', spaceId, 'summaries'), ' / ', h('span', {}, id)),
    h(
      'p',
      { class: 'muted' },
      `Level ${String(summary.level)}, `,
      time(summary.range_start),
      ' → ',
      time(summary.range_end),
      summary.sealed ? ', sealed' : ', open',
    ),
    h('p', { class: 'summary-text' }, String(summary.summary ?? '')),
    list(summary.key_findings).length > 0 ? [h('h3', {}, 'Key findings'), h('ul', {}, ...list(summary.key_findings).map((item) => h('li', {}, item)))] : null,
    list(summary.topics).length > 0 ? h('p', {}, 'Topics: ', ...list(summary.topics).map((topic) => h('span', { class: 'tag' }, topic))) : null,
    children.length > 0
      ? [
          h('h3', {}, `Covers ${count(children.length)} summaries`),
          h(
            'ul',
            { class: 'children' },
            ...children.map((child) =>
              h('li', {}, link(String(child.id), 'space', spaceId, 'summaries', String(child.id)), ' ', time(child.range_start), ' → ', time(child.range_end)),
            ),
          ),
        ]
      : null,
    notes.length > 0
      ? [
          h('h3', {}, `Covers ${count(notes.length)} notes`),
          pager(notes, (note) => {
            const record = holder(note.timestamp);
            return h(
              'div',
              { class: 'covered', 'data-filename': note.filename },
              record ? link(note.filename, 'space', spaceId, 'history', record.consolidation_id, note.filename) : link(note.filename, 'space', spaceId, 'live'),
              note.part ? h('span', { class: 'tag' }, `part ${note.part}`) : null,
              ' ',
              time(note.timestamp),
              h('span', { class: 'muted' }, record ? ` in consolidation ${record.consolidation_id}` : ' live'),
            );
          }),
        ]
      : null,
  );
}
