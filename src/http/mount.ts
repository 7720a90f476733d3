import type { Handler } from './listen.js';

/** A handler that serves some paths of a server, beside others. */
export interface Mount<C> extends Handler<C> {
  /** The paths it serves; without `owns`, every path no mount before it claimed. */
  owns?(url: URL): boolean;
}

/**
 * Several handlers behind one front door (`serve --http`: MCP at /mcp, the web viewer everywhere
 * else), none knowing of the others. A request goes to the first mount that owns its path, else
 * to the last: that mount authenticates its token, serves it, and answers its refusals in its own
 * error shape (JSON-RPC on /mcp, the viewer's API error elsewhere).
 */
export function mountAll<C>(mounts: readonly [Mount<C>, ...Mount<C>[]]): Handler<C> {
  const last = mounts[mounts.length - 1] as Mount<C>;
  const ownerOf = (url: URL): Mount<C> => mounts.find((mount) => mount.owns?.(url) ?? true) ?? last;
  return {
    authenticate: (token, url) => ownerOf(url).authenticate(token, url),
    handle: (req, res, url, admitted) => ownerOf(url).handle(req, res, url, admitted),
    refuse: (res, url, ...rest) => ownerOf(url).refuse(res, url, ...rest),
  };
}
