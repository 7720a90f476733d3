import { ApiError } from '../api.js';
import { type Child, h, link, time } from '../dom.js';

/** What every view gets: the route's parts, who is looking, and a way to register a cleanup (timers). */
export interface ViewContext {
  /** Route parts after the view's name: e.g. ['demo', 'history', '2026…'] for #/space/demo/history/2026…. */
  parts: string[];
  whoami: Whoami;
  /** The server has a model: a consolidation started here can run (the page offers no MCP sampling). */
  modelConfigured: boolean;
  onLeave(cleanup: () => void): void;
}

export interface Whoami {
  agent: string;
  permissions: string[];
  space_ids: string[] | '*';
}

export interface Note {
  filename: string;
  timestamp: string;
  agent: string;
  category: string;
  tags: string[];
  content: string;
}

export const SPACE_TABS: Array<[tab: string, label: string]> = [
  ['live', 'Live'],
  ['bank', 'Bank'],
  ['history', 'History'],
  ['summaries', 'Summaries'],
  ['search', 'Search'],
  ['jobs', 'Jobs'],
];

/** The heading of a space's pages: its name and the tabs, the current one marked. */
export function spaceHeader(spaceId: string, current: string): HTMLElement {
  return h(
    'header',
    { class: 'space-header' },
    h('h1', {}, link('Spaces', 'spaces'), ' / ', h('span', { class: 'space-id' }, spaceId)),
    h(
      'nav',
      { class: 'tabs' },
      ...SPACE_TABS.map(([tab, label]) =>
        h('a', { href: `#/space/${encodeURIComponent(spaceId)}/${tab}`, class: tab === current ? 'tab current' : 'tab', 'data-tab': tab }, label),
      ),
    ),
  );
}

/** One note, as a card: who, when, category and tags above the content (shown as text, never parsed). */
export function noteCard(note: Note, extra: Child = null): HTMLElement {
  return h(
    'article',
    { class: 'note', 'data-filename': note.filename },
    h(
      'div',
      { class: 'note-meta' },
      h('span', { class: `category cat-${/^[a-z]+$/.test(note.category) ? note.category : 'other'}` }, note.category),
      h('span', { class: 'agent' }, note.agent),
      time(note.timestamp),
      ...(note.tags ?? []).map((tag) => h('span', { class: 'tag' }, `#${tag}`)),
      extra,
    ),
    h('div', { class: 'note-content' }, note.content),
  );
}

export function errorBox(error: unknown): HTMLElement {
  const message = error instanceof ApiError ? `${error.status}: ${error.message}` : error instanceof Error ? error.message : String(error);
  return h('div', { class: 'error', role: 'alert' }, message);
}

export const loading = (): HTMLElement => h('p', { class: 'muted loading' }, 'Loading…');

export const empty = (text: string): HTMLElement => h('p', { class: 'muted empty' }, text);
