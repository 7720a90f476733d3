import { homedir } from 'node:os';
import { projectOfArgument } from '../../config/project-argument.js';
import { projectIdentity } from '../../config/project-identity.js';
import type { ProjectSpaces } from '../../mcp/default-space.js';
import type { ToolSelection } from '../../mcp/profiles.js';
import type { Checkout } from '../../shared/checkout.js';
import type { McpServerOptions } from '../../mcp/server.js';
import type { Opened, Session } from '../open.js';
import { VERSION } from '../version.js';
import { type CommandDef, integer } from '../command.js';
import { NETWORK_OPTIONS, networkOptions, viewerHandler } from './ui.js';

export interface ServeOptions {
  http?: boolean;
  host?: string;
  port?: number;
  /** --allowed-hosts (over LIVE_MEM_ALLOWED_HOSTS). */
  allowedHosts?: string[];
  /** --trust-proxy (or LIVE_MEM_TRUST_PROXY). */
  trustProxy?: boolean;
}

/**
 * Serves MCP: on stdio (what MCP clients launch), or over Streamable HTTP with --http. The MCP SDK
 * is imported here, lazily, so shell commands never pay for it. Runs until stdin closes (stdio) or
 * a signal arrives.
 */
export async function serve(session: Session, options: ServeOptions = {}): Promise<null> {
  const { core, logger, settings } = session;
  const { storage } = core.context;
  if (options.http) {
    // One server for every client: each is listed the agent profile unless the setting or its URL
    // (`?tools=`) says otherwise, and may ask for any tool but the corrections people make (those
    // too when the setting names them). An unknown tool name stops the server here (exit 2).
    const { selectTools } = await import('../../mcp/profiles.js');
    const listed = selectTools(settings.tools ?? 'agent');
    const served = selectTools(settings.tools === undefined ? 'all' : `all,${settings.tools}`);
    const [{ createMcpHttp }, { listenGuarded }, { mountAll }] = await Promise.all([
      import('../../mcp/http.js'),
      import('../../http/listen.js'),
      import('../../http/mount.js'),
    ]);
    // One server for every client: the operator's pin would send every team's notes to one space.
    if (settings.space)
      logger.warn(`LIVE_MEM_SPACE (${settings.space}) does not apply over HTTP: a call names its space_id, unless its token is limited to one space`);
    const network = networkOptions(settings, options);
    const mcp = await createMcpHttp({
      ...(await serverOptions(session)),
      tools: served,
      listed,
      trustProxy: network.trustProxy,
      authenticate: (token) => core.auth.resolve(token),
      // A client's folder is on its machine, not this one: a call names its project by its remote.
      argument: (text) => projectOfArgument(text, { home: homedir(), folders: false }),
    });
    // MCP at /mcp and the web viewer everywhere else, behind one front door; here, as on /mcp, every call needs a token.
    const server = await listenGuarded({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 8080,
      logger,
      limits: settings.http,
      ...network,
      ...mountAll([mcp.mount, await viewerHandler(session)]),
    }).catch(async (error: unknown) => {
      await mcp.close();
      throw error;
    });
    // One URL per address that reaches this machine (a wildcard bind is no address a client can use).
    const urls = server.origins.map((origin) => `${origin}/mcp`).join(', ');
    logger.info(
      `serving MCP over Streamable HTTP at ${urls} and the web viewer at ${server.origin}/ (store: ${storage.name} ${storage.location}; tools: ${listed.profile}, ${listed.tools.length}, or up to ${served.tools.length} with ?tools= in a client's URL, each caller listed those its token may call; every request needs a bearer token)`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    await mcp.close();
    return null;
  }
  const { serveStdio } = await import('../../mcp/stdio.js');
  const stdio = await stdioServer(session);
  const { tools } = stdio;
  // A person who typed `live-mem` would otherwise face a silent prompt; a client's stdin is a pipe.
  // On stderr, whatever the log level: stdout carries the protocol only.
  if (process.stdin.isTTY) process.stderr.write('live-mem: serving MCP on stdio — this is what MCP clients run; see live-mem --help\n');
  logger.info(
    `serving MCP on stdio (store: ${storage.name} ${storage.location}, auth: ${settings.token ? 'token' : settings.auth === 'required' ? 'required, no token' : 'local owner'}, tools: ${tools.profile}, ${tools.tools.length}, default space: ${describeDefault(stdio.project)})`,
  );
  await serveStdio(stdio);
  return null;
}

/** What the server is on any transport: the core, what to assume of a client's model. */
async function serverOptions(session: Opened): Promise<Omit<McpServerOptions, 'resolveCaller' | 'tools'>> {
  const { core, logger, settings } = session;
  return {
    core,
    version: VERSION,
    logger,
    samplingLimits: { contextWindow: settings.llm.contextWindow, maxOutputTokens: settings.llm.maxTokens },
  };
}

/**
 * The server `live-mem` serves on stdio for a session: its tools, its default space (the pinned one, or
 * the project of the folder it runs in: `place`, this process's folder and home), how a call's project
 * argument is read (a folder or a remote) and the session's caller, checked at each call. The one
 * composition of it: a test that serves it in process passes its own place, as a client would launch
 * the binary elsewhere.
 */
export async function stdioServer(
  session: Opened,
  place: ServePlace = { cwd: process.cwd(), home: homedir() },
): Promise<McpServerOptions & { tools: ToolSelection; project: ProjectSpaces }> {
  // An unknown tool name stops the server before it serves anything (config_error: exit 2).
  const tools = (await import('../../mcp/profiles.js')).selectTools(session.settings.tools ?? 'all');
  return {
    ...(await serverOptions(session)),
    tools,
    project: projectSpaces(session.settings.space, place),
    argument: (text: string) => projectOfArgument(text, { home: place.home, folders: true }),
    resolveCaller: session.resolveCaller,
    checkout: checkoutsOf(place.cwd),
  };
}

/**
 * The git checkout of a folder (default: the one the server runs in), found on first use and kept (anchors:
 * core/anchors/); none in `/` or a folder outside any work tree. A client's roots or a call's project name
 * the other folders: a session's few, each kept (at most MAX_CHECKOUTS: past it the oldest is found again).
 */
function checkoutsOf(cwd: string): (folder?: string) => Promise<Checkout | undefined> {
  const found = new Map<string, Promise<Checkout | undefined>>();
  return (folder = cwd) => {
    let checkout = found.get(folder);
    if (!checkout) {
      if (found.size >= MAX_CHECKOUTS) found.delete(found.keys().next().value as string);
      checkout = import('../../config/checkout.js').then(({ gitCheckout }) => gitCheckout(folder));
      found.set(folder, checkout);
    }
    return checkout;
  };
}

const MAX_CHECKOUTS = 16;

/** Where a stdio server runs: the folder it was started in and the user's home (a project's identity is read from both). */
export interface ServePlace {
  cwd: string;
  home: string;
}

/** What a stdio server knows of its project: the pinned space, the project of the folder it runs in, how a root's folder is read. */
function projectSpaces(pinned: string | undefined, { cwd, home }: ServePlace): ProjectSpaces {
  return { pinned, folder: projectIdentity(cwd, home), identify: (dir) => projectIdentity(dir, home) };
}

/** The default space as the startup line states it: a call's project argument, then the client's roots, may still choose it (mcp/default-space.ts). */
function describeDefault(project: ProjectSpaces): string {
  if (project.pinned) return `${project.pinned} (LIVE_MEM_SPACE)`;
  const before = "the project a call names, else the project of the client's roots, else";
  if ('space_id' in project.folder) return `${before} ${project.folder.space_id} (${project.folder.from})`;
  return `${before} none (${project.folder.none})`;
}

export const serveCommand: CommandDef = {
  name: 'serve',
  description: 'serve MCP on stdio (what MCP clients launch; same as no command), or over Streamable HTTP',
  options: [
    { flags: '--http', description: 'serve Streamable HTTP at /mcp instead of stdio; every request needs Authorization: Bearer' },
    { flags: '--host <host>', description: 'address to bind (default 127.0.0.1: loopback only; another address needs LIVE_MEM_AUTH=required)' },
    { flags: '--port <port>', description: 'port to listen on (default 8080; 0 = any free port)', parse: integer },
    ...NETWORK_OPTIONS,
  ],
  run: serve,
  server: true,
  examples: ['live-mem serve --http --port 8080'],
};
