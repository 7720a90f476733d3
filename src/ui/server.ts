import type { HttpLimits } from '../mcp/http-limits.js';
import { listenGuarded } from '../mcp/http-listen.js';
import type { UiHandler } from './handler.js';
import type { Logger } from '../shared/log.js';

/** `live-mem ui`: the viewer alone, behind the same front door as `serve --http`. */
export async function serveUi(options: {
  host: string;
  port: number;
  logger: Logger;
  handler: UiHandler;
  limits?: HttpLimits;
}): Promise<{ url: string; close(): Promise<void> }> {
  const { host, port, logger, limits } = options;
  const { origin, close } = await listenGuarded({ host, port, logger, ...(limits ? { limits } : {}), ...options.handler });
  return { url: `${origin}/`, close };
}
