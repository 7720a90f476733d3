import { ApiError, adoptSecret, callTool, type Result, session, token } from './api.js';
import { h } from './dom.js';
import { bankView } from './views/bank.js';
import { errorBox, loading, type ViewContext, type Whoami } from './views/common.js';
import { historyView } from './views/history.js';
import { jobsView } from './views/jobs.js';
import { liveView } from './views/live.js';
import { searchView } from './views/search.js';
import { spacesView } from './views/spaces.js';
import { summariesView } from './views/summaries.js';

type View = (context: ViewContext) => Promise<Node>;

/** Tab of #/space/{id}/{tab}/… → its view. */
const SPACE_VIEWS: Record<string, View> = {
  live: liveView,
  bank: bankView,
  history: historyView,
  summaries: summariesView,
  search: searchView,
  jobs: jobsView,
};

const main = h('main', { id: 'view' });
const who = h('span', { class: 'who' });
const signOut = h('button', { type: 'button', class: 'sign-out', hidden: true }, 'Forget token');
let leave: Array<() => void> = [];
let whoami: Whoami | undefined;
let rendering = 0;
/** Whether the server is `live-mem ui` with a secret URL (the token form then says so). */
let localSecret = false;
let modelConfigured = false;

/** #/space/{id}/{tab}/{rest…} → the view and its parts ([id, tab, rest…]); anything else → the spaces page. */
function resolve(hash: string): { view: View; parts: string[] } {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  if (parts[0] === 'space' && parts[1]) {
    const view = SPACE_VIEWS[parts[2] ?? 'live'];
    if (view) return { view, parts: [parts[1], parts[2] ?? 'live', ...parts.slice(3)] };
  }
  return { view: spacesView, parts: [] };
}

async function render(): Promise<void> {
  const mine = ++rendering;
  for (const cleanup of leave) cleanup();
  // This render's own cleanups: a render overtaken by a newer one (two navigations in a row) stops
  // its own timers, never the newer view's.
  const cleanups: Array<() => void> = [];
  leave = cleanups;
  main.replaceChildren(loading());
  try {
    whoami ??= await callTool<Result & Whoami>('system_whoami');
    who.textContent = `${whoami.agent} · ${whoami.permissions.join(', ') || 'no permission'}`;
    const { view, parts } = resolve(location.hash);
    const node = await view({ parts, whoami, modelConfigured, onLeave: (cleanup) => cleanups.push(cleanup) });
    if (mine === rendering) main.replaceChildren(node);
    else for (const cleanup of cleanups) cleanup();
  } catch (error) {
    if (mine !== rendering) return;
    if (error instanceof ApiError && error.needsToken) return askForToken(token.get() ? 'This token was refused (unknown, revoked or expired).' : '');
    main.replaceChildren(errorPage(error));
  }
}

/** A page that could not be shown (a space or an entry that does not exist, a refusal): what went wrong, and a way back. */
function errorPage(error: unknown): HTMLElement {
  const missing = error instanceof ApiError && error.status === 'not_found';
  return h(
    'section',
    { class: 'error-page' },
    h('h1', {}, missing ? 'Not found' : 'This page cannot be shown'),
    errorBox(error),
    h('p', {}, h('a', { href: '#/spaces', class: 'back' }, '← Back to the spaces')),
  );
}

/** The token form: the token goes to sessionStorage and the Authorization header, never into a URL. */
function askForToken(message: string): void {
  token.clear();
  whoami = undefined;
  who.textContent = '';
  signOut.hidden = true;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'lm_…', required: true });
  main.replaceChildren(
    h(
      'form',
      {
        class: 'token-form',
        onsubmit: (event: Event) => {
          event.preventDefault();
          token.set(input.value.trim());
          signOut.hidden = false;
          void render();
        },
      },
      h('h1', {}, 'A token is needed'),
      localSecret
        ? h(
            'p',
            {},
            'Open the address ',
            h('code', {}, 'live-mem ui'),
            ' printed (it ends with ',
            h('code', {}, '#secret=…'),
            '), or give a live-mem token with the read permission. It stays in this tab only.',
          )
        : h('p', {}, 'This server needs a live-mem token with the read permission: you will see the spaces it may read. It stays in this tab only.'),
      message ? h('p', { class: 'error', role: 'alert' }, message) : null,
      input,
      h('button', { type: 'submit' }, 'Open'),
    ),
  );
  input.focus();
}

async function start(): Promise<void> {
  document.body.replaceChildren(h('header', { class: 'top' }, h('a', { href: '#/spaces', class: 'brand' }, 'live-mem'), who, signOut), main);
  signOut.addEventListener('click', () => askForToken(''));
  window.addEventListener('hashchange', () => void render());
  adoptSecret(); // before anything reads the hash as a route
  const { token_required, local_secret, model_configured } = await session();
  localSecret = local_secret === true;
  modelConfigured = model_configured === true;
  signOut.hidden = !token.typed();
  if (token_required && !token.get()) return askForToken('');
  await render();
}

void start();
