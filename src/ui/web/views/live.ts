import { CATEGORIES } from '../../../core/validate.js';
import { callTool, followChanges, type Result } from '../api.js';
import { count, h } from '../dom.js';
import { errorBox, type Note, noteCard, spaceHeader, type ViewContext } from './common.js';

/** The most notes live_read returns at once: the feed loads this many at a time, older ones with `before`. */
const LOADED = 1000;
const PAGE = 100;
const POLL_MS = 1000;
/** While the change stream is open, a poll this rarely still runs: a safety net, not the way news arrive. */
const STREAMING_POLL_MS = 30_000;
/** After the stream failed or ended, it is opened again this much later (polling every POLL_MS meanwhile). */
const REOPEN_MS = 10_000;

type Notes = Result & { notes: Note[]; has_more: boolean };

/** What the feed shows: notes of this agent (exact) and category, asked of live_read, and with these tags (comma-separated), picked here. */
interface Filters {
  agent: string;
  category: string;
  tags: string;
}

/**
 * #/space/{id}/live: the live notes, newest first, filtered by agent and category (by live_read)
 * and tags (here), shown 100 at a time; past the 1,000 loaded, "Show more" loads the next 1,000
 * older ones (live_read with `before`), so every note of a large space can be reached. It follows
 * the space's change stream (the server's change feed, which sees notes of every process and host)
 * and, on a change, reads live_read with `since` (inclusive, to the second, so nothing is missed;
 * notes already shown are recognised by file name), putting new notes on top without reloading
 * anything. Without the stream (refused, cut), it polls live_read every second instead.
 */
export async function liveView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const filters: Filters = { agent: '', category: '', tags: '' };
  const list = h('div', { class: 'list feed' });
  const more = h('button', { type: 'button', class: 'more' });
  const status = h('p', { class: 'muted feed-status' });
  const pulse = h('span', { class: 'pulse', title: 'updates by itself' }, 'live');
  const problem = h('div');
  let notes: Note[] = [];
  let seen = new Set<string>();
  let shown = 0;
  let hasMore = false;
  let oldest = '';
  let newest = '';
  let generation = 0;

  const wantedTags = () =>
    filters.tags
      .split(',')
      .map((tag) => tag.trim().replace(/^#/, ''))
      .filter(Boolean);
  const matchesTags = (note: Note) => wantedTags().every((tag) => note.tags.includes(tag));
  const query = () => ({ space_id: spaceId, agent: filters.agent.trim(), category: filters.category });

  const describe = () => {
    status.textContent = `${count(Math.min(shown, notes.length))} of ${count(notes.length)}${hasMore ? '+' : ''} notes shown`;
  };
  const showMore = () => {
    const end = Math.min(notes.length, shown + PAGE);
    const fragment = document.createDocumentFragment();
    for (let i = shown; i < end; i++) fragment.appendChild(noteCard(notes[i] as Note));
    list.appendChild(fragment);
    shown = end;
    more.textContent = shown < notes.length ? `Show more (${count(notes.length - shown)} loaded)` : 'Show older notes';
    more.hidden = shown >= notes.length && !hasMore;
    describe();
  };
  /** Takes in a page of live_read: what the filters keep joins the list, the rest is only remembered as seen. */
  const add = (result: Notes) => {
    const unseen = result.notes.filter((note) => !seen.has(note.filename));
    notes.push(...unseen.filter(matchesTags));
    for (const note of unseen) seen.add(note.filename);
    oldest = result.notes.at(-1)?.filename ?? oldest;
    hasMore = result.has_more;
  };
  const loadOlder = async () => {
    const mine = generation;
    more.disabled = true; // one page at a time
    try {
      const result = await callTool<Notes>('live_read', { ...query(), limit: LOADED, before: oldest });
      if (mine !== generation) return;
      add(result);
      showMore();
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => {
    if (shown < notes.length) showMore();
    else void loadOlder().catch((error: unknown) => problem.replaceChildren(errorBox(error)));
  });

  const load = async () => {
    const mine = ++generation;
    const result = await callTool<Notes>('live_read', { ...query(), limit: LOADED });
    if (mine !== generation) return;
    notes = [];
    seen = new Set();
    add(result);
    newest = result.notes[0]?.timestamp ?? '';
    shown = 0;
    list.replaceChildren();
    showMore();
    if (notes.length === 0 && !hasMore) list.append(h('p', { class: 'muted empty' }, 'No live note matches.'));
  };

  const poll = async () => {
    const mine = generation;
    const result = await callTool<Notes>('live_read', { ...query(), limit: LOADED, since: newest });
    if (mine !== generation) return;
    const fresh = result.notes.filter((note) => !seen.has(note.filename));
    if (fresh.length === 0) return;
    for (const note of fresh) seen.add(note.filename);
    newest = fresh[0]?.timestamp && fresh[0].timestamp > newest ? fresh[0].timestamp : newest;
    const shownFresh = fresh.filter(matchesTags);
    if (shownFresh.length === 0) return;
    list.querySelector('.empty')?.remove();
    notes = [...shownFresh, ...notes];
    shown += shownFresh.length;
    list.prepend(...shownFresh.map((note) => noteCard(note)));
    for (const card of list.querySelectorAll('.note.fresh')) card.classList.remove('fresh');
    for (const card of Array.from(list.children).slice(0, shownFresh.length)) card.classList.add('fresh');
    describe();
  };

  await load();
  keepFresh(spaceId, poll, { pulse, problem }, context.onLeave);
  return h(
    'section',
    {},
    spaceHeader(spaceId, 'live'),
    h(
      'form',
      { class: 'filters', onsubmit: (event: Event) => event.preventDefault() },
      filterFields(filters, () => void load().catch((error: unknown) => problem.replaceChildren(errorBox(error)))),
      pulse,
    ),
    problem,
    status,
    list,
    more,
  );
}

/**
 * Runs `poll` when the space's change stream tells of a change (and every STREAMING_POLL_MS as a
 * safety net), or every POLL_MS while there is no stream, opening it again REOPEN_MS after it failed.
 * `pulse` says which (`data-source`: stream or poll) and turns stale while reading fails.
 */
function keepFresh(spaceId: string, poll: () => Promise<void>, shown: { pulse: HTMLElement; problem: HTMLElement }, onLeave: ViewContext['onLeave']): void {
  const { pulse, problem } = shown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let streaming = false;
  let polling = false;
  let again = false;
  const tick = async () => {
    clearTimeout(timer);
    if (polling) {
      again = true; // a change told while reading: read once more after
      return;
    }
    polling = true;
    try {
      await poll();
      problem.replaceChildren();
      pulse.classList.remove('stale');
    } catch (error) {
      problem.replaceChildren(errorBox(error));
      pulse.classList.add('stale');
    }
    polling = false;
    if (again) {
      again = false;
      return void tick();
    }
    if (!stopped) timer = setTimeout(tick, streaming ? STREAMING_POLL_MS : POLL_MS);
  };
  const stream = new AbortController();
  const follow = () => {
    if (stopped) return;
    pulse.dataset.source = 'poll';
    void followChanges(
      spaceId,
      (type) => {
        if (type === 'ready') {
          streaming = true;
          pulse.dataset.source = 'stream';
        } else if (type === 'notes' || type === 'committed') void tick();
      },
      stream.signal,
    )
      .catch(() => undefined)
      .finally(() => {
        streaming = false;
        if (stopped) return;
        pulse.dataset.source = 'poll';
        void tick();
        setTimeout(follow, REOPEN_MS);
      });
  };
  onLeave(() => {
    stopped = true;
    clearTimeout(timer);
    stream.abort();
  });

  follow();
  timer = setTimeout(tick, POLL_MS);
}

/** The feed's filter fields (agent, category, tags): a change writes `filters` and calls `changed`. */
function filterFields(filters: Filters, changed: () => void): HTMLElement[] {
  const input = (name: 'agent' | 'tags', placeholder: string) =>
    h('input', {
      type: 'search',
      name,
      placeholder,
      onchange: (event: Event) => {
        filters[name] = (event.target as HTMLInputElement).value;
        changed();
      },
    });
  const category = h(
    'select',
    {
      name: 'category',
      onchange: (event: Event) => {
        filters.category = (event.target as HTMLSelectElement).value;
        changed();
      },
    },
    h('option', { value: '' }, 'every category'),
    ...CATEGORIES.map((name) => h('option', { value: name }, name)),
  );
  return [input('agent', 'agent (exact)'), category, input('tags', 'tags, comma-separated')];
}
