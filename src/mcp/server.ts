import type { AuthInfo, CacheHint, ClientCapabilities, InitializeRequest, InitializeResult, Tool } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, McpServer } from '@modelcontextprotocol/server';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { Checkout } from '../shared/checkout.js';
import { isLiveMemError } from '../shared/errors.js';
import { EVERY_TOOL, offers, type Offered } from '../shared/hints.js';
import type { Logger } from '../shared/log.js';
import { clientSamplingModel, type ModelLimits } from './client-model.js';
import { modelRounds } from './model-rounds.js';
import { createDefaultSpaces, type DefaultSpaceOptions, type ProjectSpaces, type SpaceMode } from './default-space.js';
import { listTools } from './listing.js';
import { callableBy, selectTools, type ToolSelection } from './profiles.js';
import { registerPrompts } from './prompts.js';
import { CONSOLIDATE_AFTER_TASK, CONSOLIDATE_BACKLOG } from '../core/backlog.js';
import { registerResources } from './resources.js';
import { declaresTasks, serveTasks, TASKS_EXTENSION } from './tasks.js';
import { serveTools } from './tool-calls.js';
import type { ToolDefinition, RequestContext } from './tool.js';

export interface McpServerOptions {
  core: Core;
  version: string;
  logger: Logger;
  /** Who is calling, per request: the local owner on stdio; tokens later. */
  resolveCaller(ctx: RequestContext): Caller | Promise<Caller>;
  /** What to assume of the client's model when consolidating through sampling. */
  samplingLimits?: { contextWindow: number; maxOutputTokens: number };
  /** The tools served, and callable (a profile, see profiles.ts); default: every tool. */
  tools?: ToolSelection;
  /**
   * The tools a request asks to be listed, of those served: over HTTP the profile its URL names
   * (`?tools=`), else the server's default one. Default: every tool served. Either way a caller is
   * listed only what its permissions let it call (profiles.ts callableBy).
   */
  listed?(ctx: RequestContext): ToolSelection;
  /**
   * Whether the transport can send notifications outside a request's answer (stdio: yes, default).
   * Without, resources.subscribe and the listChanged capabilities are not advertised: a promise the
   * stateless HTTP transport (GET /mcp is 405) could never keep. That is the 2025 era: a 2026-07-28
   * instance advertises resources' subscribe and listChanged on every transport, for the listen streams
   * its serving entry answers (listen-watch.ts).
   */
  notifications?: boolean;
  /**
   * Whether a consolidation may use the client's model (MCP sampling) when it offers one (default: yes).
   * Not over stateless HTTP: one server answers every client there, so no client's capabilities are
   * its own, and a sampling request would have no stream to come back on.
   */
  sampling?: boolean;
  /** The checkout of a folder of this machine (default: the server's own; stdio only), for the anchors of notes (core/anchors/). */
  checkout?: (folder?: string) => Promise<Checkout | undefined>;
  /**
   * The clients reach this server over the network (HTTP): what a person fixes on their own machine
   * (a client's entry, `live-mem setup`) changes nothing for them, so hints and messages send them
   * to whoever runs the server instead (shared/hints.ts Offered.remote).
   */
  remote?: boolean;
  /**
   * Where the default space of a call that names none can come from besides a token limited to one
   * space (default-space.ts): LIVE_MEM_SPACE, the client's roots, the server's folder. Stdio only:
   * over HTTP a client has neither roots nor a folder here.
   */
  project?: ProjectSpaces;
  /** How a call's `project` argument is read (default-space.ts): a folder or a remote on stdio, a remote over HTTP. */
  argument?: DefaultSpaceOptions['argument'];
  /**
   * The protocol era this instance serves (the SDK's serving entries say, stdio.ts, http.ts): 2025's
   * (`legacy`, the default: initialize, roots, sampling) or 2026-07-28's (`modern`: stateless, no
   * request from server to client, so neither roots nor sampling).
   */
  era?: 'legacy' | 'modern';
  /** The token of the HTTP request a modern instance answers (its instructions are fitted to its caller when built). */
  authInfo?: AuthInfo | undefined;
}

/**
 * How long a 2026-07-28 client may keep each list or read (`ttlMs`, `cacheScope`): what a server
 * serves (its tools, prompts, templates) changes only when it restarts; tools/list and the
 * instructions (server/discover) are fitted to the caller's token, so private; resources change
 * with any note or consolidation, of any process: never kept.
 */
const TEN_MINUTES = 600_000;
const CACHE_HINTS: Partial<
  Record<'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list' | 'resources/read' | 'server/discover', CacheHint>
> = {
  'tools/list': { ttlMs: TEN_MINUTES, cacheScope: 'private' },
  'server/discover': { ttlMs: TEN_MINUTES, cacheScope: 'private' },
  'prompts/list': { ttlMs: TEN_MINUTES, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: TEN_MINUTES, cacheScope: 'public' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
};

/** The tools/list entries of a served selection (listing.ts), built once per process: instances are built per connection or per request. */
const listings = new WeakMap<readonly ToolDefinition[], Map<string, Tool>>();
function listingOf(tools: readonly ToolDefinition[]): Map<string, Tool> {
  let listing = listings.get(tools);
  if (!listing) {
    listing = new Map(listTools(tools).map((tool) => [tool.name, tool]));
    listings.set(tools, listing);
  }
  return listing;
}

/**
 * The memory workflow, one sentence a line, each with the tools it names: a served profile gets the
 * sentences whose tools it offers (docs/tools.md carries the text for every tool, for clients that pass no instructions).
 */
const WORKFLOW: Array<{ text: string; tools: string[]; space?: SpaceMode; model?: boolean }> = [
  { text: 'live-mem is a memory shared by agents and sessions, one space per project.', tools: [] },
  { text: "Leave space_id empty to use this project's default space.", tools: [], space: 'default' },
  { text: 'Leave space_id empty to use the space of the project your client has open (its roots).', tools: [], space: 'roots' },
  {
    text: "Give project on every call, your workspace folder's absolute path: this server has no default space (space_id names a space instead).",
    tools: [],
    space: 'project',
  },
  {
    text:
      "Give project on every call, your workspace's git remote (`git remote get-url origin` prints it), or space_id:\n" +
      'there is no default space here, unless your token is limited to one space.',
    tools: [],
    space: 'remote',
  },
  { text: 'space_list shows every space and how many notes wait in each.', tools: ['space_list'] },
  { text: 'Start of a task: memory_context (query = the task) loads what matters within a token budget.', tools: ['memory_context'] },
  { text: 'space_summary loads the rules, synthesis and whole bank.', tools: ['space_summary'] },
  { text: 'Later, memory_search finds past facts, decisions and problems.', tools: ['memory_search'] },
  { text: 'live_read shows what other agents just wrote.', tools: ['live_read'] },
  {
    text:
      'While working, record with live_note as things happen, one fact per note, in its category: decision (what\n' +
      'was chosen and why), progress (done, now works), issue (a problem), todo (work left), question (open),\n' +
      'insight (a lesson), observation (a fact noticed). Notes never overwrite each other.',
    tools: ['live_note'],
  },
  { text: "Before stopping, note the session's decisions, progress and open questions.", tools: ['live_note'] },
  {
    text: `When ${CONSOLIDATE_BACKLOG} or more notes wait (space_list counts them), call bank_consolidate to fold them into the memory bank.`,
    tools: ['space_list', 'bank_consolidate'],
    model: true,
  },
  {
    text:
      'No model is configured here, so you fold notes into the memory bank yourself: when a session starts with ' +
      `${CONSOLIDATE_BACKLOG} or more notes waiting, and at the end of a task with ${CONSOLIDATE_AFTER_TASK} or more, call bank_consolidate\n` +
      'without a plan for a work package (the notes, rules and bank), write the plan it asks for and submit it with its handle.',
    tools: ['bank_consolidate'],
    model: false,
  },
];

/**
 * The server's instructions for what it offers: no sentence names a tool it does not serve, and
 * space_id is said to be optional only where a default space can exist (`space`), and a consolidation
 * is asked of live-mem's model where one exists, of the agent itself where none does (`model`).
 */
export function serverInstructions(offered: Offered = EVERY_TOOL, space: SpaceMode = 'default'): string {
  return WORKFLOW.filter(
    (line) =>
      line.tools.every((tool) => offers(offered, tool)) &&
      (line.space === undefined || line.space === space) &&
      (line.model === undefined || line.model === offered.model),
  )
    .map((line) => line.text)
    .join('\n');
}

/** The instructions with every tool served: docs/tools.md's "The memory workflow for agents". */
export const SERVER_INSTRUCTIONS = serverInstructions();

/**
 * The tools a caller may call of a selection, and what its hints may name (`offered` narrowed to
 * them), kept per caller and selection: both are objects never changed (the owner's caller is one
 * object for every request), so a call does not filter every tool again.
 */
function offerings(offered: Offered): (caller: Caller, asked: ToolSelection) => { profile: string; listed: ToolDefinition[]; offered: Offered } {
  const cache = new WeakMap<Caller, WeakMap<ToolSelection, { profile: string; listed: ToolDefinition[]; offered: Offered }>>();
  return (caller, asked) => {
    let byCaller = cache.get(caller);
    if (!byCaller) {
      byCaller = new WeakMap();
      cache.set(caller, byCaller);
    }
    let found = byCaller.get(asked);
    if (!found) {
      const listed = callableBy(caller, asked.tools);
      found = { profile: asked.profile, listed, offered: { ...offered, tools: new Set(listed.map((tool) => tool.name)) } satisfies Offered };
      byCaller.set(asked, found);
    }
    return found;
  };
}

/**
 * An MCP server exposing the core's tools, for one era (options.era); the transport is the caller's
 * choice. Built once per stdio connection, and per request of a 2026-07-28 client over HTTP: what
 * costs (the tools/list answer, schemas) is built once per process.
 */
export async function createMcpServer(options: McpServerOptions): Promise<McpServer> {
  const served = options.tools ?? selectTools('all');
  const { tools } = served;
  const modern = options.era === 'modern';
  /**
   * The client lends its own model: no endpoint is configured, it declared sampling and this transport can
   * carry the request (pushed in 2025, embedded in input_required rounds in 2026-07-28: model-rounds.ts).
   */
  const lendsModel = (capabilities: ClientCapabilities | undefined): boolean =>
    !options.core.context.llm && options.sampling !== false && capabilities?.sampling !== undefined;
  /** What the client of `ctx` declared: at initialize in 2025, with each request (its `_meta` envelope) in 2026-07-28. */
  const declared = (ctx: RequestContext): ClientCapabilities | undefined =>
    modern
      ? ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
      : instance?.server.getClientCapabilities();
  /** A consolidation this client asks for can run: on the configured endpoint, or on the client's model. */
  const hasModel = (capabilities: ClientCapabilities | undefined): boolean => options.core.context.llm !== undefined || lendsModel(capabilities);
  const spaces = createDefaultSpaces({
    core: options.core,
    logger: options.logger,
    project: options.project,
    argument: options.argument,
  });
  let instance: McpServer | undefined;
  // Whether a note creates a missing space may depend on the caller (`auto`): tools and prompts refine this per call.
  // Resources and prompts name the tools served; tools/list, the instructions and a tool's hints those listed to the caller (offeredTo).
  const offered: Offered = {
    tools: new Set(tools.map((tool) => tool.name)),
    autoCreateSpaces: options.core.context.autoCreateSpaces === 'on',
    remote: options.remote === true,
    // Known once the client has initialized: read when a request is answered (its copies are made then).
    get model() {
      return hasModel(instance?.server.getClientCapabilities());
    },
  };
  const offeredFor = offerings(offered);
  /** The caller of a request that lists (tools/list, initialize): one whose token is refused is listed what anyone may call. */
  const listingCaller = async (ctx: RequestContext): Promise<Caller> => {
    try {
      return await options.resolveCaller(ctx);
    } catch (error) {
      if (isLiveMemError(error, 'forbidden')) return ANONYMOUS;
      throw error;
    }
  };
  /** What this request is offered: the tools it asked for, those of them its caller may call, under the profile's name. */
  const offeredTo = (caller: Caller, ctx: RequestContext) => offeredFor(caller, options.listed?.(ctx) ?? served);
  /** The instructions for a client declaring `capabilities` (none in 2026-07-28: no roots, no sampling), fitted to the caller of `ctx`. */
  const instructionsFor = async (capabilities: ClientCapabilities | undefined, ctx: RequestContext) => {
    const { offered: forCaller } = offeredTo(await listingCaller(ctx), ctx);
    return serverInstructions({ ...forCaller, model: hasModel(capabilities) }, spaces.mode(capabilities));
  };
  // A 2026-07-28 instance serves one caller, known as it is built (HTTP: the request's token, stdio: the session's):
  // its instructions, which server/discover answers, are fitted to it. There the SDK fills in ttlMs and cacheScope.
  const opening = { mcpReq: {}, http: options.authInfo ? { authInfo: options.authInfo } : undefined } as unknown as RequestContext;
  const server = new McpServer(
    { name: 'live-mem', title: 'live-mem', version: options.version },
    {
      // The SDK answers resources/list, read and templates but not subscribe: resources.ts does, hence `subscribe` here.
      // 2026-07-28's tasks extension: long work answered as a task to a client that declares it (tasks.ts).
      capabilities: {
        tools: {},
        logging: {},
        resources: { subscribe: true, listChanged: true },
        prompts: {},
        ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      ...(modern ? { instructions: await instructionsFor(undefined, opening), cacheHints: CACHE_HINTS } : {}),
    },
  );
  instance = server;
  if (!modern) {
    spaces.follow(server.server);
    instructionsPerClient(server, instructionsFor);
  }
  const limits: ModelLimits = options.samplingLimits ?? { contextWindow: 32_768, maxOutputTokens: 8_192 };
  serveTools(server, tools, {
    options,
    offered,
    offeredTo,
    spaces,
    lendsModel: (ctx) => lendsModel(declared(ctx)),
    takesTasks: (ctx) => modern && declaresTasks(declared(ctx)),
    clientModel: (tool, ctx) => (modern ? modelRounds(ctx, tool, limits) : { llm: clientSamplingModel(server.server, limits) }),
    legacy: !modern,
  });
  if (modern) serveTasks(server, tools, { core: options.core, resolveCaller: options.resolveCaller });
  // Replaces the SDK's tools/list answer with a leaner one (listing.ts): the tools this request is offered (offeredTo), in the order served.
  server.server.setRequestHandler('tools/list', async (_request, ctx) => {
    const listing = listingOf(tools);
    const { listed } = offeredTo(await listingCaller(ctx), ctx);
    return { tools: listed.flatMap((tool) => listing.get(tool.name) ?? []) };
  });

  // Resources and prompts read through the core with the request's caller, as the tools do. A 2026-07-28
  // client hears of changes on a listen stream the serving entry watches (listen-watch.ts), never from its instance.
  const notifications = !modern && (options.notifications ?? true);
  const host = {
    core: options.core,
    logger: options.logger,
    caller: async (ctx: RequestContext) => options.resolveCaller(ctx),
    offered,
    spaces,
    ...(options.checkout ? { checkout: options.checkout } : {}),
  };
  registerResources(server, { ...host, notifications });
  registerPrompts(server, host);
  // The SDK declares listChanged for each kind it registers; merged last, these take them back. A
  // listen stream is told of resources alone (tools and prompts change only with a restart), on every transport.
  if (!notifications)
    server.server.registerCapabilities({
      tools: { listChanged: false },
      prompts: { listChanged: false },
      resources: { subscribe: modern, listChanged: modern },
    });
  return server;
}

/**
 * Instructions fitted to each client at initialize: whether space_id may be left empty depends on
 * the roots the client declares there, whether agents are asked to consolidate on the sampling it
 * declares (no endpoint, no sampling: no model to consolidate with), and the tools named on those
 * its caller is listed (a read token is never told to write a note). The SDK fixes a server's
 * instructions when it is built, so its own initialize answer (`_oninitialize`, which also records
 * the client's capabilities) is wrapped; an SDK without it fails here, at startup, not with wrong
 * instructions.
 */
function instructionsPerClient(server: McpServer, instructionsFor: (capabilities: ClientCapabilities, ctx: RequestContext) => Promise<string>): void {
  const inner = server.server as unknown as { _oninitialize?: (request: InitializeRequest) => Promise<InitializeResult> };
  const answer = inner._oninitialize;
  if (typeof answer !== 'function') throw new Error('the MCP SDK no longer answers initialize through Server._oninitialize: update instructionsPerClient');
  server.server.setRequestHandler('initialize', async (request, ctx) => ({
    ...(await answer.call(server.server, request)),
    instructions: await instructionsFor(request.params.capabilities, ctx),
  }));
}
