/**
 * The page's only way to the store: the viewer API, which runs the MCP tools (POST
 * /api/tools/{name}). The token — or the secret of `live-mem ui`'s URL — lives in sessionStorage
 * (gone with the tab) and travels in the Authorization header, never in a URL the server sees.
 */
const TOKEN_KEY = 'live-mem-token';
/** Set when the token is the secret of `live-mem ui`'s link, not one a person typed. */
const FROM_LINK_KEY = 'live-mem-token-from-link';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  /** A token a person gave; `fromLink` when it is the secret of the printed link. */
  set: (value: string, fromLink = false): void => {
    sessionStorage.setItem(TOKEN_KEY, value);
    if (fromLink) sessionStorage.setItem(FROM_LINK_KEY, '1');
    else sessionStorage.removeItem(FROM_LINK_KEY);
  },
  /**
   * Whether the tab holds a token a person gave, which they may want to forget: the secret of the
   * link is not one (forgetting it would only lock them out of the page they opened).
   */
  typed: (): boolean => sessionStorage.getItem(TOKEN_KEY) !== null && sessionStorage.getItem(FROM_LINK_KEY) === null,
  clear: (): void => {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(FROM_LINK_KEY);
  },
};

/**
 * `live-mem ui` prints its address with a secret in the fragment (`/#secret=…`): a fragment never
 * reaches the server, its logs or a Referer. The page takes it as its bearer, then drops it from the
 * address bar and the history, so it is neither shown nor bookmarked. Returns whether there was one.
 */
export function adoptSecret(): boolean {
  const secret = /^#secret=([A-Za-z0-9_-]+)$/.exec(location.hash)?.[1];
  if (secret === undefined) return false;
  token.set(secret, true);
  history.replaceState(null, '', `${location.pathname}${location.search}#/spaces`);
  return true;
}

export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly status: string,
    message: string,
    /** No token, or one the server refuses: the page asks for one. */
    readonly needsToken: boolean,
  ) {
    super(message);
  }
}

export type Result = Record<string, unknown> & { status: string };

export interface SessionInfo {
  token_required: boolean;
  /** The server is `live-mem ui` on loopback: the URL it printed carries a secret that opens the page. */
  local_secret?: boolean;
  /** A model is configured in the server: consolidations started from the page can run. */
  model_configured?: boolean;
  version: string;
}

export async function session(): Promise<SessionInfo> {
  const response = await fetch('/api/session', { cache: 'no-store' });
  return (await response.json()) as SessionInfo;
}

export async function callTool<T extends Result = Result>(name: string, args: Record<string, unknown> = {}): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const bearer = token.get();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const response = await fetch(`/api/tools/${name}`, { method: 'POST', headers, body: JSON.stringify(args), cache: 'no-store' });
  const body = (await response.json().catch(() => ({ status: 'error', message: `HTTP ${response.status}` }))) as Result;
  if (!response.ok) {
    const needsToken = response.status === 401 || /invalid_token/.test(response.headers.get('www-authenticate') ?? '');
    throw new ApiError(response.status, String(body.status), String(body.message ?? `HTTP ${response.status}`), needsToken);
  }
  return body as T;
}

/**
 * Follows a space's change stream (`GET /api/spaces/{id}/changes`, server-sent events read from a
 * fetch: EventSource cannot send the Authorization header). `onEvent` gets each event's type; resolves
 * when the stream ends, rejects when it cannot be opened. `signal` closes it.
 */
export async function followChanges(spaceId: string, onEvent: (type: string) => void, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  const bearer = token.get();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const response = await fetch(`/api/spaces/${encodeURIComponent(spaceId)}/changes`, { headers, cache: 'no-store', signal });
  if (!response.ok || !response.body)
    throw new ApiError(response.status, 'error', `the change stream answered HTTP ${response.status}`, response.status === 401);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const type = /^event: (.+)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (type) onEvent(type);
    }
  }
}
