import { listenGuarded } from '../mcp/http-listen.js';
import type { UiHandler } from './handler.js';
import type { Logger } from '../shared/log.js';

/** `live-mem ui`: the viewer alone, behind the same front door as `serve --http`. */
export async function serveUi(options: { host: string; port: number; logger: Logger; handler: UiHandler }): Promise<{ url: string; close(): Promise<void> }> {
  const { origin, close } = await listenGuarded({ host: options.host, port: options.port, logger: options.logger, ...options.handler });
  return { url: `${origin}/`, close };
}
