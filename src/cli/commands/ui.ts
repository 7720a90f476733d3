import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hashToken } from '../../core/auth/token-store.js';
import { isLoopback } from '../../http/listen.js';
import { createExclusive } from '../../shared/private-file.js';
import type { UiHandler } from '../../ui/handler.js';
import type { Session } from '../open.js';
import { type CommandDef, hosts, integer, type OptionDef } from '../command.js';
import { VERSION } from '../version.js';

export interface UiOptions {
  host?: string;
  port?: number;
  open?: boolean;
  allowedHosts?: string[];
  trustProxy?: boolean;
}

/** The network options of `serve --http` and `ui`: flags over settings (http/listen.ts `hostPolicy`). */
export function networkOptions(settings: Session['settings'], options: Pick<UiOptions, 'allowedHosts' | 'trustProxy'>) {
  return {
    allowedHosts: options.allowedHosts ?? settings.http.allowedHosts,
    trustProxy: options.trustProxy === true || settings.http.trustProxy,
    authRequired: settings.auth === 'required',
  };
}

/**
 * The web viewer's handler for this session. With `secret`, a request bearing it acts as this
 * process's caller (the local owner, or LIVE_MEM_TOKEN's); without, every request needs a token.
 */
export async function viewerHandler(session: Session, secret?: string): Promise<UiHandler> {
  // Imported here, like the MCP server in serve.ts: other commands never load the tools.
  const [{ createUiHandler }, { defaultAssetsDir, loadUiAssets }] = await Promise.all([import('../../ui/handler.js'), import('../../ui/assets.js')]);
  return createUiHandler({
    core: session.core,
    logger: session.logger,
    assets: await loadUiAssets(defaultAssetsDir()),
    version: VERSION,
    ...(secret !== undefined ? { local: { secretHash: hashToken(secret), caller: session.resolveCaller } } : {}),
  });
}

/**
 * `live-mem ui`: serves the web viewer until SIGINT or SIGTERM; prints its URL, opens it with --open.
 * On a loopback address with auth not required, the page acts as this process's caller — but only
 * with a secret drawn at each start and printed in the URL's fragment (`#secret=…`), which the page
 * keeps and sends as its bearer: every local user reaches 127.0.0.1, only the owner sees this output.
 * A fragment never reaches the server, its logs or a Referer. Elsewhere the page asks for a token.
 */
export async function ui(session: Session, options: UiOptions = {}): Promise<null> {
  const host = options.host ?? '127.0.0.1';
  const secret = isLoopback(host) && session.settings.auth !== 'required' ? randomBytes(32).toString('base64url') : undefined;
  const { serveUi } = await import('../../ui/server.js');
  const server = await serveUi({
    host,
    port: options.port ?? 8090,
    limits: session.settings.http,
    ...networkOptions(session.settings, options),
    logger: session.logger,
    handler: await viewerHandler(session, secret),
  });
  const url = secret !== undefined ? `${server.url}#secret=${secret}` : server.url;
  const { storage } = session.core.context;
  process.stdout.write(`live-mem web viewer at ${url}\n`);
  for (const other of server.urls.slice(1)) process.stdout.write(`  also at ${other}\n`);
  session.logger.info(
    `serving the web viewer (store: ${storage.name} ${storage.location}; ${secret !== undefined ? 'the page needs the secret of the URL above, or a token' : 'the page asks for a token'})`,
  );
  // Listened for before the browser is opened: a signal in between would end the process and leave the page (and its secret) behind.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const opened = options.open ? await openBrowser(url, session.logger) : undefined;
  await stopped;
  await server.close();
  await opened?.remove();
  return null;
}

/**
 * Opens the viewer in the system browser, as Jupyter does: through a page in a folder only this user
 * can read (mkdtemp: 0700) that redirects to the URL, so the secret is never an argument of
 * xdg-open or of the browser, where every local user would read it with `ps`. The page is removed
 * when the server stops. A failure is a warning: the server keeps serving.
 */
async function openBrowser(url: string, logger: Session['logger']): Promise<{ remove(): Promise<void> }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'live-mem-ui-'));
  const page = path.join(folder, 'open.html');
  // The URL is ours (an address, a port, base64url): nothing in it needs escaping in an attribute.
  await createExclusive(
    page,
    `<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url=${url}">\n<title>live-mem</title>\n<p><a href="${url}">Open the live-mem web viewer</a></p>\n`,
    { mode: 0o600 },
  );
  const target = pathToFileURL(page).href;
  const [command, args] =
    process.platform === 'darwin' ? ['open', [target]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', target]] : ['xdg-open', [target]];
  const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
  child.once('error', (error) => logger.warn(`could not open a browser (${error.message}): open the URL above yourself`));
  child.unref();
  return { remove: () => rm(folder, { recursive: true, force: true }) };
}

/** `--allowed-hosts` and `--trust-proxy`, as `serve --http` and `ui` take them. */
export const NETWORK_OPTIONS: OptionDef[] = [
  {
    flags: '--allowed-hosts <list>',
    description:
      'Host names clients reach this server by (memory.example.com, name:port), comma-separated (env LIVE_MEM_ALLOWED_HOSTS; off loopback, default any; * = any, with auth required)',
    parse: hosts,
  },
  {
    flags: '--trust-proxy',
    description: 'behind a reverse proxy: use X-Forwarded-Host and X-Forwarded-For (env LIVE_MEM_TRUST_PROXY); never when clients connect directly',
  },
];

export const uiCommand: CommandDef = {
  name: 'ui',
  description: 'serve the web viewer: watch spaces live, read the bank, history, summaries, search',
  options: [
    {
      flags: '--host <host>',
      description:
        'address to bind (default 127.0.0.1: loopback only, the printed URL carries a secret unless auth is required; another address needs LIVE_MEM_AUTH=required)',
    },
    { flags: '--port <port>', description: 'port to listen on (default 8090; 0 = any free port)', parse: integer },
    { flags: '--open', description: 'open the page in the system browser' },
    ...NETWORK_OPTIONS,
  ],
  run: ui,
  server: true,
};
