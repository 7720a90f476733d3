import type { IncomingMessage, ServerResponse } from 'node:http';
import { publicOrigin } from '../http/forwarded.js';

/**
 * What `/mcp` says to HTTP clients beyond the SDK's transport: where its resource metadata is
 * (RFC 9728), and a JSON answer to a client that accepts only JSON.
 */

/** The MCP endpoint's protected resource metadata: RFC 9728's well-known path with the resource's path (`/mcp`) after it. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** What the metadata sends a person to: how tokens are made and given to a client. */
const TOKENS_DOCS = 'https://github.com/chrlesur/live-mem/blob/main/docs/security.md#tokens-over-http';

/**
 * The challenge of a 401: the realm, and where the resource metadata is (RFC 9728 §5.1, as the MCP
 * authorization specification asks of a server that answers 401).
 */
export const bearerChallenge = (req: IncomingMessage, trustProxy: boolean): string =>
  `Bearer realm="live-mem", resource_metadata="${publicOrigin(req, trustProxy)}${RESOURCE_METADATA_PATH}"`;

/**
 * The resource metadata (RFC 9728 §3), public like the 401 that points to it. live-mem's tokens are
 * its own (`live-mem token create`, given to a client in its configuration), and no OAuth
 * authorization server issues them: so the document names none (`authorization_servers` is
 * optional in RFC 9728). The MCP specification wants one only of a server that takes part in
 * OAuth, which is optional; a client reading this document learns that the token goes in the
 * Authorization header and where to read how to get one, instead of guessing OAuth endpoints.
 */
export function replyResourceMetadata(req: IncomingMessage, res: ServerResponse, trustProxy: boolean): void {
  const metadata = {
    resource: `${publicOrigin(req, trustProxy)}/mcp`,
    resource_name: 'live-mem',
    bearer_methods_supported: ['header'],
    resource_documentation: TOKENS_DOCS,
  };
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(JSON.stringify(metadata));
}

const EVENT_STREAM = 'text/event-stream';

/**
 * Readies a POST whose client accepts JSON but not an event stream to be answered in JSON, and says
 * whether it was one (the transport is then set to answer JSON). The
 * transport specification asks clients to accept both; the SDK's transport answers 406 to one that
 * does not, even set to answer JSON (`enableJsonResponse`). So for such a client the request's
 * Accept is made to list both before the transport reads it (the headers it reads, and the raw ones
 * it may build a Request from): the client gets what it asked for. A client that accepts both keeps its event stream (and the progress notifications on it).
 */
export function answerJsonOnly(req: IncomingMessage): boolean {
  const accept = String(req.headers.accept ?? '*/*').toLowerCase();
  if (accept.includes(EVENT_STREAM) || !/(application\/json|application\/\*|\*\/\*)/.test(accept)) return false;
  const both = `application/json, ${EVENT_STREAM}`;
  req.headers.accept = both;
  const raw = req.rawHeaders;
  let found = false;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== 'accept') continue;
    raw[i + 1] = both;
    found = true;
  }
  if (!found) raw.push('Accept', both);
  return true;
}
