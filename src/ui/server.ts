import type { HttpLimits } from '../http/limits.js';
import { listenGuarded, type NetworkOptions } from '../http/listen.js';
import type { UiHandler } from './handler.js';
import type { Logger } from '../shared/log.js';

/** `live-mem ui`: the viewer alone, behind the same front door as `serve --http`. */
export async function serveUi(
  options: NetworkOptions & {
    host: string;
    port: number;
    logger: Logger;
    handler: UiHandler;
    limits?: HttpLimits;
  },
): Promise<{ url: string; urls: string[]; close(): Promise<void> }> {
  const { host, port, logger, limits, allowedHosts, trustProxy, authRequired } = options;
  const { origin, origins, close } = await listenGuarded({
    host,
    port,
    logger,
    ...(limits ? { limits } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
    ...(trustProxy ? { trustProxy } : {}),
    ...(authRequired ? { authRequired } : {}),
    ...options.handler,
  });
  return { url: `${origin}/`, urls: origins.map((each) => `${each}/`), close };
}
