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

/** space_info's `embeddings` (llm/embeddings.ts EmbeddingsProgress). */
interface Embeddings {
  model: string;
  state: string;
  documents?: number;
  embedded?: number;
}

/** How the results were ranked, and how far the space's embeddings are: "BM25 alone · embeddings … 1,200 of 5,882 documents, embedding". */
function embeddingsLine(mode: string, embeddings: Embeddings): Node {
  const counted =
    typeof embeddings.documents === 'number' ? ` ${(embeddings.embedded ?? 0).toLocaleString()} of ${embeddings.documents.toLocaleString()} documents,` : '';
  return h(
    'p',
    { class: 'muted embeddings' },
    `${mode === 'hybrid' ? 'hybrid' : 'BM25 alone'} · embeddings ${embeddings.model}:${counted} ${embeddings.state.replace('_', ' ')}`,
  );
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

  const { results, mode } = await callTool<Result & { results: Hit[]; mode: string }>('memory_search', { space_id: spaceId, query, limit: 50 });
  // Then the embeddings' progress, when configured: the search has loaded the space's index, which it counts
  // (a token whose tools lack space_info still searches).
  const info = await callTool<Result & { embeddings?: Embeddings }>('space_info', { space_id: spaceId }).catch(() => null);
  if (info?.embeddings) section.append(embeddingsLine(mode, info.embeddings));
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
