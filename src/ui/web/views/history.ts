import { callTool, type Result } from '../api.js';
import { count, h, link, pager, scrollBox, time } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { empty, type Note, noteCard, spaceHeader, type ViewContext } from './common.js';
import { changedFiles, type Consolidation, type HistoryPage } from './history-index.js';
import { type RetentionEntry, retentionBadge, sectionsRetention } from './retention.js';

const PAGE = 50;

const range = (r: Consolidation['time_range']) => (r ? [time(r.oldest), ' → ', time(r.newest)] : h('span', { class: 'muted' }, '—'));

/** #/space/{id}/history[/{consolidation}]: the consolidations, newest first, 50 at a time; one with its metrics and notes. */
export async function historyView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const header = spaceHeader(spaceId, 'history');
  const id = context.parts[2];
  if (id) return h('section', {}, header, await consolidationDetail(spaceId, id, context.parts[3]));

  const rows = h('tbody');
  const more = h('button', { type: 'button', class: 'more' }, 'Older consolidations');
  let before = '';
  const loadPage = async () => {
    const page = await callTool<HistoryPage>('history_list', { space_id: spaceId, limit: PAGE, before });
    for (const record of page.consolidations) {
      rows.append(
        h(
          'tr',
          { 'data-consolidation': record.consolidation_id, 'data-kind': record.kind ?? 'consolidation' },
          h(
            'td',
            {},
            link(record.consolidation_id, 'space', spaceId, 'history', record.consolidation_id),
            record.kind === 'compaction' ? h('span', { class: 'tag' }, 'compaction') : null,
            record.kind === 'revision' ? h('span', { class: 'tag', title: record.reason ?? '' }, `revision: ${record.action ?? ''}`) : null,
            record.kind === 'forget' ? h('span', { class: 'tag', title: record.reason ?? '' }, 'forget') : null,
          ),
          h('td', {}, time(record.committed_at)),
          h('td', {}, range(record.time_range)),
          // A compaction moved no note: it kept the sections it rewrote instead.
          h(
            'td',
            { class: 'num' },
            record.kind === 'compaction' || record.kind === 'revision' ? `${count(record.preimages_count ?? 0)} pre-images` : count(record.notes_count ?? 0),
          ),
          h(
            'td',
            { class: 'files' },
            ...changedFiles(record.bank_files).map((file) => h('span', { class: 'file' }, link(file, 'space', spaceId, 'bank', file))),
          ),
          h('td', { class: 'muted' }, [record.by, record.model].filter(Boolean).join(' · ')),
        ),
      );
    }
    before = page.next_before ?? '';
    more.hidden = !page.has_more;
    return page.consolidations.length;
  };
  more.addEventListener('click', () => void loadPage());
  if ((await loadPage()) === 0) return h('section', {}, header, empty('No consolidation yet.'));
  return h(
    'section',
    {},
    header,
    scrollBox(
      h(
        'table',
        { class: 'history' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Consolidation'),
            h('th', {}, 'Committed'),
            h('th', {}, 'Notes from → to'),
            h('th', { class: 'num' }, 'Notes'),
            h('th', {}, 'Bank files written'),
            h('th', {}, 'By'),
          ),
        ),
        rows,
      ),
    ),
    more,
  );
}

/** One consolidation; `focus` (a note's file name, from a summary) is shown first and marked. */
async function consolidationDetail(spaceId: string, id: string, focus?: string): Promise<Node> {
  const result = await callTool<Result & { consolidation: Record<string, unknown>; notes: Note[]; preimages?: Preimage[]; total: number }>('history_read', {
    space_id: spaceId,
    consolidation_id: id,
  });
  const record = result.consolidation;
  const metrics = (record.metrics ?? {}) as Record<string, unknown>;
  const files = changedFiles(record.bank_files);
  const dispositions = new Map(((record.dispositions as Disposition[] | undefined) ?? []).map((d) => [d.note, d]));
  const retention = (record.retention as RetentionEntry[] | undefined) ?? [];
  const retained = new Map(retention.flatMap((entry) => (entry.note ? [[entry.note, entry] as const] : [])));
  return h(
    'div',
    { class: 'consolidation' },
    h('h2', {}, link('History', 'space', spaceId, 'history'), ' / ', h('span', {}, id)),
    h(
      'dl',
      { class: 'metrics' },
      h('dt', {}, 'Committed'),
      h('dd', {}, time(record.committed_at)),
      h('dt', {}, 'Notes from → to'),
      h('dd', {}, range(record.time_range as Consolidation['time_range'])),
      h('dt', {}, 'Bank files written'),
      h('dd', {}, ...files.map((file) => h('span', { class: 'file' }, link(file, 'space', spaceId, 'bank', file)))),
      ...Object.entries(metrics).flatMap(([key, value]) => [
        h('dt', {}, key.replace(/_/g, ' ')),
        h('dd', {}, typeof value === 'object' ? JSON.stringify(value) : String(value)),
      ]),
    ),
    typeof (record.synthesis as { content?: unknown } | undefined)?.content === 'string'
      ? [h('h3', {}, 'Synthesis it wrote'), h('p', { class: 'synthesis' }, String((record.synthesis as { content: string }).content))]
      : null,
    record.kind === 'revision' ? revisionBody(spaceId, record, result.preimages ?? []) : null,
    record.kind === 'compaction'
      ? [
          sectionsRetention(retention),
          h('h3', {}, `${count(result.preimages?.length ?? 0)} sections as they were before this compaction`),
          ...(result.preimages ?? []).map((section) => preimageCard(spaceId, section)),
        ]
      : record.kind === 'revision' || record.kind === 'forget'
        ? null
        : [
            h('h3', {}, `${count(result.total)} notes`),
            result.notes.length > 0
              ? pager(focused(result.notes, focus), (note) =>
                  marked(
                    noteCard(note, [disposition(spaceId, dispositions.get(note.filename)), retentionBadge(retained.get(note.filename))]),
                    note.filename === focus,
                  ),
                )
              : empty('No notes.'),
          ],
  );
}

interface Disposition {
  note: string;
  status: string;
  into?: string[];
  by?: string;
  reason?: string;
}

/** What the consolidation's plan said became of a note (consolidation/provenance.ts): integrated where (linked), superseded, discarded, or unaccounted. */
function disposition(spaceId: string, d: Disposition | undefined): HTMLElement | null {
  if (!d) return null;
  const into = (d.into ?? []).map((place) => {
    const file = place.split('#')[0] ?? place;
    return /\.md$/.test(file) ? link(place, 'space', spaceId, 'bank', file) : place;
  });
  const detail =
    d.status === 'integrated' ? into.flatMap((part, i) => (i > 0 ? ['; ', part] : [part])) : d.status === 'superseded' ? `by ${d.by ?? '?'}` : (d.reason ?? '');
  const said = Array.isArray(detail) ? detail.length > 0 : detail !== '';
  return h('span', { class: `disposition disposition-${/^[a-z]+$/.test(d.status) ? d.status : 'other'}` }, `→ ${d.status}`, said ? ': ' : '', detail);
}

/** A person's correction: who, why, and each file (and the rules) as it was before. */
function revisionBody(spaceId: string, record: Record<string, unknown>, preimages: Preimage[]): HTMLElement[] {
  const revision = (record.revision ?? {}) as { action?: string; by?: string; reason?: string | null; reverts?: string; rules?: { before?: string } };
  return [
    h(
      'p',
      { class: 'revision' },
      `${revision.action ?? 'revision'} by ${revision.by ?? '?'}`,
      revision.reason ? ` — ${revision.reason}` : '',
      revision.reverts ? ` (reverts ${revision.reverts})` : '',
    ),
    h('h3', {}, `${count(preimages.length)} file(s) as they were before this revision`),
    ...preimages.map((section) => preimageCard(spaceId, section)),
    ...(typeof revision.rules?.before === 'string' ? [h('h3', {}, 'The rules before'), h('pre', { class: 'rules' }, revision.rules.before)] : []),
  ];
}

interface Preimage {
  filename: string;
  path: string[];
  content: string;
}

/** An earlier version of a bank section: where it was, and its text as Markdown (as the bank view renders it). */
function preimageCard(spaceId: string, section: Preimage): HTMLElement {
  return h(
    'article',
    { class: 'preimage', 'data-file': section.filename },
    h(
      'div',
      { class: 'note-meta' },
      h('span', { class: 'file' }, link(section.filename, 'space', spaceId, 'bank', section.filename)),
      h('span', { class: 'muted' }, section.path.join(' › ')),
    ),
    h('div', { class: 'markdown' }, renderMarkdown(section.content).node),
  );
}

const focused = (notes: Note[], focus: string | undefined) =>
  focus ? [...notes.filter((note) => note.filename === focus), ...notes.filter((note) => note.filename !== focus)] : notes;

function marked(card: HTMLElement, on: boolean): HTMLElement {
  if (on) card.classList.add('fresh', 'focus');
  return card;
}
