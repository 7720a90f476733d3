import { callTool, type Result } from '../api.js';
import { bytes, h, link, route, time } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { empty, spaceHeader, type ViewContext } from './common.js';
import { lastWriters } from './history-index.js';

interface BankFile {
  filename: string;
  size: number;
  last_modified?: string;
}

/**
 * #/space/{id}/bank[/{file}]: the bank's files, each with the consolidation that last wrote it, and
 * one file rendered as Markdown (safely: markdown.ts) with a table of contents.
 */
export async function bankView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const { files } = await callTool<Result & { files: BankFile[] }>('bank_list', { space_id: spaceId });
  const header = spaceHeader(spaceId, 'bank');
  if (files.length === 0) return h('section', {}, header, empty('The bank is empty: no consolidation has written it yet.'));
  const current = context.parts[2] && files.some((file) => file.filename === context.parts[2]) ? context.parts[2] : (files[0] as BankFile).filename;
  const [writers, file] = await Promise.all([
    lastWriters(
      spaceId,
      files.map((f) => f.filename),
    ),
    callTool<Result & { content: string; last_modified: string }>('bank_read', { space_id: spaceId, filename: current }),
  ]);

  const sidebar = h(
    'nav',
    { class: 'bank-files' },
    h('h2', {}, 'Files'),
    h(
      'ul',
      {},
      ...files.map((f) => {
        const writer = writers.get(f.filename);
        return h(
          'li',
          { class: f.filename === current ? 'current' : undefined, 'data-file': f.filename },
          link(f.filename, 'space', spaceId, 'bank', f.filename),
          h('span', { class: 'muted' }, ` ${bytes(f.size)}`),
          h(
            'div',
            { class: 'writer muted' },
            writer
              ? ['last written by ', link(writer.consolidation_id, 'space', spaceId, 'history', writer.consolidation_id)]
              : 'not written by a recorded consolidation',
          ),
        );
      }),
    ),
  );

  const { node, headings } = renderMarkdown(file.content, { bankRoute: (name) => route('space', spaceId, 'bank', name) });
  const toc = h(
    'nav',
    { class: 'toc' },
    h('h2', {}, 'Contents'),
    h(
      'ul',
      {},
      ...headings.map((heading) =>
        h(
          'li',
          { class: `toc-${heading.level}` },
          h(
            'a',
            {
              href: '#',
              onclick: (event: Event) => {
                event.preventDefault();
                document.getElementById(heading.id)?.scrollIntoView();
              },
            },
            heading.text,
          ),
        ),
      ),
    ),
  );
  const writer = writers.get(current);
  return h(
    'section',
    {},
    header,
    h(
      'div',
      { class: 'bank' },
      sidebar,
      h(
        'article',
        { class: 'markdown', 'data-file': current },
        h(
          'p',
          { class: 'muted file-meta' },
          h('strong', {}, current),
          ' — modified ',
          time(file.last_modified),
          writer ? [' by consolidation ', link(writer.consolidation_id, 'space', spaceId, 'history', writer.consolidation_id)] : null,
        ),
        node,
      ),
      headings.length > 0 ? toc : null,
    ),
  );
}
