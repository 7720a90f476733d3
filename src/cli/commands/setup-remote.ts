import { invalid } from '../../shared/errors.js';
import { hasUserInfo, shownUrl } from '../../shared/shown-url.js';
import type { Client, HttpEntry, Scope, ServerEntry, SetupGlobals, SetupOptions } from './setup-options.js';

/**
 * `setup <client> --url URL`: an entry for a live-mem server over HTTP (`serve --http`), in each
 * client's own form, with the token where the client can read it and nowhere else it need not be.
 */

/**
 * The HTTP entry of a client, with the token as the client reads it: the token itself, or a
 * reference to an environment variable the client expands when it connects (Claude Code `${NAME}`,
 * Cursor `${env:NAME}`; Cline expands none). Claude Desktop reads no remote entry from its file.
 */
export function httpEntry(client: Exclude<Client, 'claude-desktop'>, url: string, token: { value: string } | { variable: string }): HttpEntry {
  if ('variable' in token && client === 'cline') {
    throw invalid('cline does not expand variables in its settings: use --token-file (the token is then written into them, readable by you only)');
  }
  const bearer = 'value' in token ? token.value : client === 'cursor' ? `\${env:${token.variable}}` : `\${${token.variable}}`;
  const headers = { Authorization: `Bearer ${bearer}` };
  if (client === 'claude-code') return { type: 'http', url, headers };
  if (client === 'cline') return { type: 'streamableHttp', url, headers };
  return { url, headers };
}

/** Flags that mean nothing for an HTTP entry, or that it lacks: refused, rather than silently dropped. */
export function refuseRemoteMismatch(client: Client, options: SetupOptions, globals: SetupGlobals): void {
  if (options.tokenEnv !== undefined && options.url === undefined) throw invalid('--token-env is for an HTTP entry: give --url too');
  if (options.url === undefined) return;
  const local = [
    ['--home', globals.home],
    ['--storage', globals.storage],
    ['--config', globals.config],
    ['--agent', globals.agent],
    ['--space', options.space],
  ].flatMap(([flag, value]) => (value === undefined ? [] : [flag]));
  if (local.length > 0)
    throw invalid(
      `${local.join(', ')}: not with --url: the server chooses its store, the token names the agent and its spaces (\`live-mem token create NAME -s SPACE\`)`,
    );
  if (options.hooks) throw invalid('--hooks reads the memory with the CLI on a local store: not with --url');
  if (options.npx && client !== 'claude-desktop') throw invalid('--npx chooses how a client launches live-mem: an HTTP entry launches nothing');
  if (globals.tokenFile === undefined && options.tokenEnv === undefined)
    throw invalid('--url needs the token the client sends: --token-file FILE (a token made by `live-mem token create`), or --token-env NAME');
  if (globals.tokenFile !== undefined && options.tokenEnv !== undefined) throw invalid('give --token-file or --token-env, not both');
  if (options.tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.tokenEnv))
    throw invalid(`--token-env names an environment variable (letters, digits, _), got ${JSON.stringify(options.tokenEnv)}`);
  if (client === 'claude-desktop' && options.tokenEnv !== undefined)
    throw invalid('claude-desktop: use --token-file (a desktop app does not see the variables of your shell; its bridge reads the file at each start)');
}

/**
 * An http(s) URL, as given (a trailing slash kept: the server's path is the server's), and shown
 * without credentials. A user or password in it is refused: the token is the credential, and fetch
 * (the clients', `connect`'s) sends none from a URL.
 */
function remoteUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`--url must be an http(s) URL (https://memory.example.com/mcp), got ${JSON.stringify(shownUrl(raw))}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`--url must be an http(s) URL, got ${JSON.stringify(shownUrl(url))}`);
  if (hasUserInfo(url)) throw invalid(`--url takes no user or password (${shownUrl(url)}): the token is the credential, from --token-file or --token-env`);
  return raw;
}

/**
 * The URL asking the server to list `tools` (a checked tools setting: a profile or tool names, none
 * of which needs escaping) to this client: `?tools=` replaced or added, the rest of the URL kept.
 */
export function withTools(raw: string, tools: string | undefined): string {
  if (tools === undefined) return raw;
  const url = new URL(raw);
  url.searchParams.delete('tools');
  url.search = `${url.search ? `${url.search}&` : '?'}tools=${tools}`;
  return url.toString();
}

/**
 * The entry of a client for the server at `options.url`, and what the output must say about it.
 * Claude Desktop reads no remote server from its file (remote servers there are Connectors, which
 * Anthropic's cloud reaches with OAuth, not a server on the user's network with a bearer token): its
 * entry launches a local live-mem that relays to the server (`connect`), reading the token from its
 * file at each start. The others get their HTTP form, with the token itself (in a file then written
 * 0600) or a reference to a variable they expand.
 */
export function remoteEntry(
  client: Client,
  options: { url: string; tools?: string | undefined; tokenEnv?: string | undefined; scope: Scope; file: string; fileGiven?: boolean },
  launch: { command: string; args: string[] },
  token: { file: string; value: string } | undefined,
): { entry: ServerEntry; secret: boolean; notes: string[] } {
  const url = withTools(remoteUrl(options.url), options.tools);
  const notes: string[] = [];
  if (client === 'claude-desktop') {
    if (!token) throw new Error('refuseRemoteMismatch lets claude-desktop through with a token file only');
    const entry = { command: launch.command, args: [...launch.args, '--token-file', token.file, 'connect', url], env: {} };
    notes.push(
      `claude-desktop reads no remote server from its file: the entry launches live-mem as a bridge to ${shownUrl(url)}, reading the token from ${token.file} at each start`,
    );
    return { entry, secret: false, notes };
  }
  if (options.tokenEnv !== undefined) {
    notes.push(`the entry reads the token from $${options.tokenEnv} when ${client} connects: set it in the environment ${client} starts from`);
    return { entry: httpEntry(client, url, { variable: options.tokenEnv }), secret: false, notes };
  }
  if (!token) throw new Error('refuseRemoteMismatch requires --token-file or --token-env');
  if (options.scope === 'project' && !options.fileGiven)
    throw invalid(
      `${options.file} is shared with the project (often committed): it must not hold the token; use --token-env NAME, which writes a reference to a variable instead`,
    );
  notes.push(
    `the token from ${token.file} is written into ${options.file}, readable by you only (mode 0600)${client === 'cline' ? '' : '; --token-env NAME writes a reference to a variable instead'}`,
  );
  return { entry: httpEntry(client, url, { value: token.value }), secret: true, notes };
}
