import { Lexer, type Token, type Tokens } from 'marked';
import { append, type Child, h, scrollBox } from './dom.js';

/**
 * Markdown written by an LLM (the bank) shown safely: `marked` only tokenises, and the DOM is
 * built from the tokens with createElement and text nodes. No HTML string is ever parsed, so raw
 * HTML in the source (`<script>`, `<img onerror>`) is shown as the text it is; link URLs keep only
 * http:, https: and mailto: (relative links to a bank file become viewer routes, `#anchors` scroll
 * to a heading, anything else — `javascript:`, `data:` — is dropped, its text kept); images are
 * not loaded from anywhere but shown as links, except inline `data:image/*` ones.
 */
export interface Rendered {
  node: DocumentFragment;
  /** The headings, for a table of contents: their level, text and the id given to them. */
  headings: Array<{ level: number; text: string; id: string }>;
}

export interface MarkdownOptions {
  /** Where a relative link to another bank file (`techContext.md`) leads, if anywhere. */
  bankRoute?: (filename: string) => string;
}

const SAFE_SCHEME = /^(https?:|mailto:)/i;
const DATA_IMAGE = /^data:image\/(png|gif|jpeg|webp);base64,[a-z0-9+/=\s]+$/i;
const BANK_FILE = /^(?:\.\/)?([A-Za-z0-9._-]+\.md)$/;

/** What a link may point at: a safe absolute URL, a bank route, an in-page anchor; else null (drop it). */
export function safeHref(raw: string, options: MarkdownOptions = {}): { href: string; external: boolean } | { anchor: string } | null {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:"): strip them before looking.
  const href = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (href.startsWith('#')) return { anchor: href.slice(1) };
  if (SAFE_SCHEME.test(href)) {
    try {
      const url = new URL(href);
      return SAFE_SCHEME.test(url.protocol) ? { href: url.href, external: true } : null;
    } catch {
      return null;
    }
  }
  const bank = BANK_FILE.exec(href)?.[1];
  if (bank && options.bankRoute) return { href: options.bankRoute(bank), external: false };
  return null;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '') || 'section';

export function renderMarkdown(source: string, options: MarkdownOptions = {}): Rendered {
  const headings: Rendered['headings'] = [];
  const used = new Map<string, number>();
  const anchorId = (text: string) => {
    const base = `md-${slug(text)}`;
    const n = used.get(base) ?? 0;
    used.set(base, n + 1);
    return n === 0 ? base : `${base}-${n}`;
  };

  const inline = (tokens: Token[] | undefined): Child[] => (tokens ?? []).map(inlineToken);

  const inlineToken = (token: Token): Child => {
    switch (token.type) {
      case 'strong':
        return h('strong', {}, ...inline((token as Tokens.Strong).tokens));
      case 'em':
        return h('em', {}, ...inline((token as Tokens.Em).tokens));
      case 'del':
        return h('del', {}, ...inline((token as Tokens.Del).tokens));
      case 'codespan':
        return h('code', {}, (token as Tokens.Codespan).text);
      case 'br':
        return h('br');
      case 'link':
        return linkOf(token as Tokens.Link);
      case 'image':
        return imageOf(token as Tokens.Image);
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? h('span', {}, ...inline(text.tokens)) : decode(text.text);
      }
      case 'escape':
        return decode((token as Tokens.Escape).text);
      default:
        // html, tags and anything unknown: the source as text.
        return token.raw;
    }
  };

  const linkOf = (token: Tokens.Link): Child => {
    const target = safeHref(token.href, options);
    const content = inline(token.tokens);
    if (!target) return h('span', { class: 'dropped-link', title: 'link removed: only http, https and mailto links are kept' }, ...content);
    if ('anchor' in target) {
      return h(
        'a',
        {
          href: '#',
          onclick: (event: Event) => {
            event.preventDefault();
            document.getElementById(`md-${slug(target.anchor)}`)?.scrollIntoView();
          },
        },
        ...content,
      );
    }
    return h('a', { href: target.href, ...(target.external ? { rel: 'noopener noreferrer nofollow', target: '_blank' } : {}) }, ...content);
  };

  const imageOf = (token: Tokens.Image): Child => {
    if (DATA_IMAGE.test(token.href)) return h('img', { src: token.href, alt: token.text });
    const target = safeHref(token.href, options);
    const label = `[image: ${token.text || 'untitled'}]`;
    return target && 'href' in target ? h('a', { href: target.href, rel: 'noopener noreferrer nofollow', target: '_blank' }, label) : label;
  };

  const block = (token: Token): Child => {
    switch (token.type) {
      case 'heading': {
        const heading = token as Tokens.Heading;
        const id = anchorId(heading.text);
        headings.push({ level: heading.depth, text: textOf(heading.tokens), id });
        const tag = `h${Math.min(6, Math.max(1, heading.depth))}` as 'h1';
        return h(tag, { id }, ...inline(heading.tokens));
      }
      case 'paragraph':
        return h('p', {}, ...inline((token as Tokens.Paragraph).tokens));
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? h('span', {}, ...inline(text.tokens)) : decode(text.text);
      }
      case 'code':
        return h('pre', {}, h('code', {}, (token as Tokens.Code).text));
      case 'blockquote':
        return h('blockquote', {}, ...(token as Tokens.Blockquote).tokens.map(block));
      case 'hr':
        return h('hr');
      case 'list': {
        const list = token as Tokens.List;
        const items = list.items.map((item) =>
          h('li', {}, item.task ? h('input', { type: 'checkbox', disabled: true, checked: item.checked === true }) : null, ...item.tokens.map(block)),
        );
        return list.ordered ? h('ol', typeof list.start === 'number' ? { start: list.start } : {}, ...items) : h('ul', {}, ...items);
      }
      case 'table': {
        const table = token as Tokens.Table;
        const cell = (tag: 'th' | 'td', c: Tokens.TableCell) => h(tag, c.align ? { class: `align-${c.align}` } : {}, ...inline(c.tokens));
        return scrollBox(
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ...table.header.map((c) => cell('th', c)))),
            h('tbody', {}, ...table.rows.map((row) => h('tr', {}, ...row.map((c) => cell('td', c))))),
          ),
        );
      }
      case 'space':
      case 'def':
        return null;
      case 'html':
        return h('pre', { class: 'raw-html' }, token.raw);
      default:
        return 'tokens' in token && Array.isArray(token.tokens) ? h('div', {}, ...inline(token.tokens as Token[])) : token.raw;
    }
  };

  const node = document.createDocumentFragment();
  for (const token of Lexer.lex(source, { gfm: true })) {
    append(node, block(token));
  }
  return { node, headings };
}

/** marked leaves HTML entities (`&amp;`, `&lt;`) escaped in text tokens; shown as text they must be decoded, never parsed. */
function decode(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, entity: string) =>
    entity === 'amp' ? '&' : entity === 'lt' ? '<' : entity === 'gt' ? '>' : entity === 'quot' ? '"' : "'",
  );
}

function textOf(tokens: Token[] | undefined): string {
  return (tokens ?? []).map((token) => ('tokens' in token && Array.isArray(token.tokens) ? textOf(token.tokens as Token[]) : decode(token.raw))).join('');
}
