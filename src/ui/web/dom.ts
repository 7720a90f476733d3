/**
 * The page is built with createElement and text nodes only: store content (notes, names, file
 * names, LLM-written Markdown) never goes through an HTML parser, so it can hold any markup and
 * still be shown as text.
 */
export type Child = Node | string | number | null | undefined | false | Child[];

type Attributes = Record<string, string | number | boolean | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, ...child);
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/**
 * A table in a box of its own that scrolls sideways when the window is narrower than the table:
 * the page itself never does, so the header, tabs and text keep to the screen.
 */
export const scrollBox = (table: HTMLElement): HTMLElement => h('div', { class: 'table-scroll' }, table);

/** A link inside the viewer: to a route of its own hash router, never to a URL taken from the store. */
export const route = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

export const link = (text: Child, ...parts: string[]): HTMLAnchorElement => h('a', { href: route(...parts) }, text);

/** A date-time in the reader's locale, to the second; the ISO text as a tooltip. */
export function time(iso: unknown): HTMLElement {
  if (typeof iso !== 'string' || iso === '') return h('span', { class: 'muted' }, '—');
  const date = new Date(iso);
  const shown = Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return h('time', { datetime: iso, title: iso }, shown);
}

export const count = (n: unknown): string => (typeof n === 'number' ? n.toLocaleString() : '—');

export function bytes(n: unknown): string {
  if (typeof n !== 'number') return '—';
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A button that shows `Show more` under a list of `total` items rendered `step` at a time. */
export function pager<T>(items: T[], render: (item: T) => Node, step = 100): HTMLElement {
  const list = h('div', { class: 'list' });
  const more = h('button', { type: 'button', class: 'more' });
  let shown = 0;
  const next = () => {
    const end = Math.min(items.length, shown + step);
    const fragment = document.createDocumentFragment();
    for (let i = shown; i < end; i++) fragment.appendChild(render(items[i] as T));
    list.appendChild(fragment);
    shown = end;
    more.textContent = `Show more (${(items.length - shown).toLocaleString()} left)`;
    more.hidden = shown >= items.length;
  };
  more.addEventListener('click', next);
  next();
  return h('div', {}, list, more);
}
