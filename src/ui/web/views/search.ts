import { callTool, type Result } from '../api.js';
import { h, link, time } from '../dom.js';
import { empty, spaceHeader, type ViewContext } from './common.js';

interface Hit {
  source: string;
  level?: number;
  ref: string;
  text: string;
  score: number;
  consolidation_id?: string;
  compaction_id?: string;
  superseded_at?: string;
  timestamp?: string;
  agent?: string;
  category?: string;
}

/** Where a hit can be read whole in the viewer. */
function hitLink(spaceId: string, hit: Hit): Node {
  switch (hit.source) {
    case 'history':
      return hit.consolidation_id ? link(hit.ref, 'space', spaceId, 'history', hit.consolidation_id) : document.createTextNode(hit.ref);
    case 'summary':
      return link(hit.ref, 'space', spaceId, 'summaries', hit.ref);
    case 'bank':
      return link(hit.ref, 'space', spaceId, 'bank', hit.ref.split('#')[0] as string);
    case 'bank_history': // an earlier version of a bank section: read with the compaction that rewrote it
      return hit.compaction_id ? link(hit.ref, 'space', spaceId, 'history', hit.compaction_id) : document.createTextNode(hit.ref);
    case 'live':
      return link(hit.ref, 'space', spaceId, 'live');
    default:
      return document.createTextNode(hit.ref);
  }
}

/** #/space/{id}/search[/{query}]: memory_search over every level, each hit with its source, level and where to read it. */
export async function searchView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const query = context.parts[2] ?? '';
  const box = h('input', { type: 'search', name: 'query', value: query, placeholder: 'search notes, bank, summaries…', autofocus: true });
  const form = h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/space/${encodeURIComponent(spaceId)}/search/${encodeURIComponent(box.value.trim())}`;
      },
    },
    box,
    h('button', { type: 'submit' }, 'Search'),
  );
  const section = h('section', {}, spaceHeader(spaceId, 'search'), form);
  if (query.trim() === '') return section;

  const { results } = await callTool<Result & { results: Hit[] }>('memory_search', { space_id: spaceId, query, limit: 50 });
  if (results.length === 0) {
    section.append(empty('Nothing found.'));
    return section;
  }
  section.append(
    h(
      'ol',
      { class: 'hits' },
      ...results.map((hit) =>
        h(
          'li',
          { class: 'hit', 'data-source': hit.source },
          h(
            'div',
            { class: 'note-meta' },
            h('span', { class: `source source-${/^[a-z_]+$/.test(hit.source) ? hit.source : 'other'}` }, hit.source),
            typeof hit.level === 'number' ? h('span', { class: 'tag' }, `level ${hit.level}`) : null,
            hitLink(spaceId, hit),
            hit.agent ? h('span', { class: 'agent' }, hit.agent) : null,
            hit.timestamp ? time(hit.timestamp) : null,
            hit.superseded_at ? h('span', { class: 'muted' }, 'earlier version, replaced ', time(hit.superseded_at)) : null,
            h('span', { class: 'muted score' }, `score ${hit.score.toFixed(3)}`),
          ),
          h('div', { class: 'note-content' }, hit.text),
        ),
      ),
    ),
  );
  return section;
}
