import { spawn } from 'node:child_process';
import { isLoopback } from '../../mcp/http-listen.js';
import type { UiHandler } from '../../ui/handler.js';
import type { Session } from '../open.js';
import { VERSION } from '../version.js';

export interface UiOptions {
  host?: string;
  port?: number;
  open?: boolean;
}

/**
 * The web viewer's handler for this session. `local: true` lets a request without a token act as
 * this process's caller (the local owner, or LIVE_MEM_TOKEN's) — only for `live-mem ui` bound to a
 * loopback address with auth not required, where whoever can reach the page owns the files anyway.
 */
export async function viewerHandler(session: Session, local: boolean): Promise<UiHandler> {
  // Imported here, like the MCP server in serve.ts: other commands never load the tools.
  const [{ createUiHandler }, { defaultAssetsDir, loadUiAssets }] = await Promise.all([import('../../ui/handler.js'), import('../../ui/assets.js')]);
  return createUiHandler({
    core: session.core,
    logger: session.logger,
    assets: await loadUiAssets(defaultAssetsDir()),
    version: VERSION,
    ...(local ? { localCaller: session.resolveCaller } : {}),
  });
}

/** `live-mem ui`: serves the web viewer until SIGINT or SIGTERM; prints its URL, opens it with --open. */
export async function ui(session: Session, options: UiOptions = {}): Promise<null> {
  const host = options.host ?? '127.0.0.1';
  const local = isLoopback(host) && session.settings.auth !== 'required';
  const { serveUi } = await import('../../ui/server.js');
  const server = await serveUi({
    host,
    port: options.port ?? 8090,
    limits: session.settings.http,
    logger: session.logger,
    handler: await viewerHandler(session, local),
  });
  const { storage } = session.core.context;
  process.stdout.write(`live-mem web viewer at ${server.url}\n`);
  session.logger.info(
    `serving the web viewer (store: ${storage.name} ${storage.location}; ${local ? 'no token needed on this loopback address' : 'the page asks for a token'})`,
  );
  if (options.open) openBrowser(server.url, session.logger);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return null;
}

/** Opens a URL in the system browser; a failure is a warning, the server keeps serving. */
function openBrowser(url: string, logger: Session['logger']): void {
  const [command, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
  child.once('error', (error) => logger.warn(`could not open a browser (${error.message}): open ${url} yourself`));
  child.unref();
}
