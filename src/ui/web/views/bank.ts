import { callTool, type Result } from '../api.js';
import { bytes, h, link, route, time } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { empty, spaceHeader, type ViewContext } from './common.js';
import { lastWriters } from './history-index.js';

interface BankFile {
  filename: string;
  size: number;
  last_modified?: string;
  tokens?: number;
  budget_tokens?: number;
  over_budget?: boolean;
}

/** 950, 1.2k, 16k: a token count at a glance (the exact figure is the tooltip). */
const kilo = (n: number): string => (n < 1000 ? String(n) : `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`);

/** A size against its budget: a meter, and "1.2k / 4k tokens", marked when over. */
function budgetUse(tokens: number | undefined, budget: number | undefined, over: boolean | undefined): HTMLElement | null {
  if (typeof tokens !== 'number' || typeof budget !== 'number') return null;
  return h(
    'div',
    { class: over ? 'budget over' : 'budget', title: `${tokens.toLocaleString()} of ${budget.toLocaleString()} tokens${over ? ' — over budget' : ''}` },
    // A meter, not a styled bar: the page's CSP allows no inline style.
    h('meter', { min: 0, max: budget, value: Math.min(tokens, budget), low: budget * 0.75, high: budget * 0.9, optimum: 0 }),
    ` ${kilo(tokens)} / ${kilo(budget)} tokens${over ? ' — over budget' : ''}`,
  );
}

interface SourceNote {
  filename: string;
  timestamp: string | null;
  agent: string | null;
  content: string | null;
  consolidation_id: string;
  /** The sections it fed, "A > B" ('' = the whole file). */
  sections: string[];
}

const fold = (path: string): string => path.toLowerCase();

/** A "sources" disclosure: the notes (bank_explain) a section was consolidated from, each linked to its consolidation. */
function sourcesOf(spaceId: string, notes: SourceNote[]): HTMLElement {
  return h(
    'details',
    { class: 'sources' },
    h('summary', { class: 'muted' }, `sources (${notes.length})`),
    h(
      'ul',
      {},
      ...notes.map((note) =>
        h(
          'li',
          { 'data-note': note.filename },
          time(note.timestamp),
          ` ${note.agent ?? ''} · `,
          link(note.consolidation_id, 'space', spaceId, 'history', note.consolidation_id),
          h('div', { class: 'source-text' }, note.content ?? '(no longer in history)'),
        ),
      ),
    ),
  );
}

/**
 * Puts under each heading of a rendered file the notes its section was written from (its heading
 * path, outermost first, as consolidation cites it); the notes of whole-file writes go under the
 * file's line. Sections no consolidation cited get nothing.
 */
function showSources(
  spaceId: string,
  article: HTMLElement,
  meta: HTMLElement,
  headings: Array<{ level: number; text: string; id: string }>,
  notes: SourceNote[],
) {
  const at = (path: string) => notes.filter((note) => note.sections.some((section) => fold(section) === fold(path)));
  const whole = at('');
  if (whole.length > 0) meta.after(sourcesOf(spaceId, whole));
  const stack: Array<{ level: number; text: string }> = [];
  for (const heading of headings) {
    while (stack.length > 0 && (stack[stack.length - 1] as { level: number }).level >= heading.level) stack.pop();
    stack.push(heading);
    const cited = at(stack.map((entry) => entry.text).join(' > '));
    const element = article.querySelector(`#${CSS.escape(heading.id)}`);
    if (cited.length > 0 && element) element.after(sourcesOf(spaceId, cited));
  }
}

/**
 * #/space/{id}/bank[/{file}]: the bank's files, each with the consolidation that last wrote it, and
 * one file rendered as Markdown (safely: markdown.ts) with a table of contents.
 */
export async function bankView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const listed = await callTool<Result & { files: BankFile[]; total_tokens?: number; budget_tokens?: number }>('bank_list', { space_id: spaceId });
  const { files } = listed;
  const header = spaceHeader(spaceId, 'bank');
  if (files.length === 0) return h('section', {}, header, empty('The bank is empty: no consolidation has written it yet.'));
  const current = context.parts[2] && files.some((file) => file.filename === context.parts[2]) ? context.parts[2] : (files[0] as BankFile).filename;
  const [writers, file, explained] = await Promise.all([
    lastWriters(
      spaceId,
      files.map((f) => f.filename),
    ),
    callTool<Result & { content: string; last_modified: string }>('bank_read', { space_id: spaceId, filename: current }),
    // Sources are a help to reading, not the file: a failure leaves the file shown without them.
    callTool<Result & { notes: SourceNote[] }>('bank_explain', { space_id: spaceId, filename: current, limit: 100 }).catch(() => null),
  ]);

  const sidebar = h(
    'nav',
    { class: 'bank-files' },
    h('h2', {}, 'Files'),
    h('div', { class: 'bank-total muted' }, 'Whole bank', budgetUse(listed.total_tokens, listed.budget_tokens, listed.over_budget === true)),
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
          budgetUse(f.tokens, f.budget_tokens, f.over_budget),
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
  const meta = h(
    'p',
    { class: 'muted file-meta' },
    h('strong', {}, current),
    ' — modified ',
    time(file.last_modified),
    writer ? [' by consolidation ', link(writer.consolidation_id, 'space', spaceId, 'history', writer.consolidation_id)] : null,
  );
  const article = h('article', { class: 'markdown', 'data-file': current }, meta, node);
  if (explained) showSources(spaceId, article, meta, headings, explained.notes);
  return h('section', {}, header, h('div', { class: 'bank' }, sidebar, article, headings.length > 0 ? toc : null));
}
