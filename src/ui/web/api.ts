/**
 * The page's only way to the store: the viewer API, which runs the MCP tools (POST
 * /api/tools/{name}). The token lives in sessionStorage (gone with the tab) and travels in the
 * Authorization header, never in a URL.
 */
const TOKEN_KEY = 'live-mem-token';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

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

export async function session(): Promise<{ token_required: boolean; version: string }> {
  const response = await fetch('/api/session', { cache: 'no-store' });
  return (await response.json()) as { token_required: boolean; version: string };
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
