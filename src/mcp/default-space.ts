import { fileURLToPath } from 'node:url';
import type { Server, ClientCapabilities, Root } from '@modelcontextprotocol/server';
import { type Caller, canAccessSpace, ownerCaller } from '../core/caller.js';
import { createCore, type Core } from '../core/core.js';
import { type ProjectClaim, projectSpace } from '../core/space/project-space.js';
import { firstNoteSpace } from '../core/space/space-service.js';
import { invalid, isLiveMemError, LiveMemError } from '../shared/errors.js';
import { NO_DEFAULT_SPACE } from '../shared/hints.js';
import type { Logger } from '../shared/log.js';
import { createMemoryDriver } from '../storage/memory/memory-driver.js';

/**
 * The space of a call that names none, one mechanism for every tool, prompt and whoami of a
 * connection. The rules, first that applies: a pinned space (LIVE_MEM_SPACE); the project the call
 * names (its `project` argument: a folder, or a remote); the project of the client's MCP roots; the
 * project of the folder the server was started in; the one space a token is limited to. None: the
 * call is refused and told how to give it one, never sent to a catch-all space. A project is found
 * by config/project-identity.ts and config/project-argument.ts, which the CLI gives here; which
 * space it uses (its own, or an older one bound to it) is core/space/project-space.ts's one decision.
 */

/** The rule that chose a call's space (`space_source`). */
export type SpaceSource = 'space_id' | 'LIVE_MEM_SPACE' | 'argument' | 'roots' | 'folder' | 'token';

/** A folder's project (config/project-identity.ts), or why it is none. */
export type FolderProject = (ProjectClaim & { from: string; folder?: string | undefined }) | { none: string };

/** What a stdio server knows of its project, from the CLI (the composition root). None over HTTP: no client folder there. */
export interface ProjectSpaces {
  /** LIVE_MEM_SPACE. */
  pinned?: string | undefined;
  /** The project of the folder the server was started in. */
  folder: FolderProject;
  /** The project of a folder a client's root names. */
  identify(dir: string): FolderProject;
}

export type DefaultSpace =
  /** `project`: the project a space this call creates is made for (recorded in its meta). */
  | { space_id: string; source: SpaceSource; detail: string; project?: string | undefined; folder?: string | undefined }
  /** No rule gave a space: `detail` says why each did not; `refused`, the refusal to give (a project's older space undecided). */
  | { space_id?: undefined; source: 'none'; detail: string; refused?: LiveMemError };

/**
 * How the instructions speak of the space: a default exists; it may come from the client's roots;
 * none can exist on this stdio server, so each call names its project (the workspace folder); or
 * over HTTP, where a call names its project by its git remote.
 */
export type SpaceMode = 'default' | 'roots' | 'project' | 'remote';

export interface DefaultSpaces {
  /** The space of `caller`'s call that names none, given its `project` argument (empty: none), and the rule that chose it. */
  resolve(caller: Caller, project?: string): Promise<DefaultSpace>;
  /** Whether a default space can exist for a client declaring `capabilities` (the instructions say it). */
  mode(capabilities: ClientCapabilities | undefined): SpaceMode;
  /**
   * A core on which `spaceId` exists as its first note will create it, empty: a read of the caller's
   * own default space before that note answers what it will answer then (tool.ts `runTool`).
   */
  asCreated(spaceId: string, caller: Caller): Promise<Core>;
  /** Follows the roots of the client of `server` (a 2025-era stdio connection, with `project`); call once, before it connects. */
  follow(server: Server): void;
}

/** How long a call waits for the client's answer to `roots/list` before going on to the next rule. */
export const ROOTS_WAIT_MS = 3_000;

export interface DefaultSpaceOptions {
  core: Core;
  logger: Logger;
  /** Stdio: the pinned space and the server's folder; absent over HTTP. */
  project?: ProjectSpaces | undefined;
  /**
   * How a call's `project` argument is read (config/project-argument.ts, given by the CLI): a folder
   * or a remote on stdio, a remote only over HTTP. Absent (the web viewer's calls): refused.
   */
  argument?: ((text: string) => FolderProject) | undefined;
}

export function createDefaultSpaces(options: DefaultSpaceOptions): DefaultSpaces {
  const { project } = options;
  let roots: ReturnType<typeof followRoots> | undefined;
  const spaceOf = projectSpaces(options.core);
  const named = (caller: Caller, text: string) => namedProject(caller, text, options.argument, spaceOf);
  return {
    async resolve(caller, argument) {
      if (project?.pinned) return { space_id: project.pinned, source: 'LIVE_MEM_SPACE', detail: 'LIVE_MEM_SPACE, the space pinned for this server' };
      if (argument) return named(caller, argument);
      const passed: string[] = [];
      const fromRoots = await roots?.answer();
      if (fromRoots && 'space_id' in fromRoots) return spaceOf(fromRoots, 'roots', fromRoots.from);
      if (fromRoots) passed.push(fromRoots.none);
      if (project) {
        if ('space_id' in project.folder) {
          const detail = `the folder the server runs in: ${project.folder.from}`;
          return spaceOf(project.folder, 'folder', passed.length > 0 ? `${detail} (${passed.join('; ')})` : detail);
        }
        passed.push(`the server's folder: ${project.folder.none}`, 'no LIVE_MEM_SPACE is set');
      } else passed.push('over HTTP a client has no roots nor folder here');
      if (caller.spaces !== '*' && caller.spaces.size === 1) {
        const [only] = caller.spaces;
        return { space_id: only as string, source: 'token', detail: `the one space this token may use (${passed.join('; ')})` };
      }
      return { source: 'none', detail: [...passed, 'no token limited to one space'].join('; ') };
    },
    mode(capabilities) {
      if (!project) return 'remote';
      if (project.pinned || 'space_id' in project.folder) return 'default';
      return capabilities?.roots ? 'roots' : 'project';
    },
    asCreated: newSpaceReads(options.core),
    follow(server) {
      if (project) roots = followRoots(server, project.identify, options.logger);
    },
  };
}

/**
 * The refusal of a call that names no space where no rule gives one: the message says why, the hint
 * (shared/hints.ts) how to fix it. A project whose older space is undecided keeps its own refusal.
 */
export function noDefaultSpace(what: string, chosen: DefaultSpace): LiveMemError {
  if (chosen.source === 'none' && chosen.refused) return chosen.refused;
  return new LiveMemError('invalid_input', `${what} is required: ${NO_DEFAULT_SPACE} (${chosen.detail})`);
}

/**
 * The space of the project a call names (its `project` argument). An argument that names no project
 * is the call's refusal, saying why: the agent said where it works, so no other rule may guess.
 * A token limited to listed spaces still limits: a project whose space it does not list is refused
 * (`forbidden`), naming the project's own id only, so that the token learns nothing of the older
 * spaces it cannot read (core/space/project-space.ts).
 */
async function namedProject(
  caller: Caller,
  text: string,
  read: ((text: string) => FolderProject) | undefined,
  spaceOf: ReturnType<typeof projectSpaces>,
): Promise<DefaultSpace> {
  const found = read?.(text) ?? { none: 'this server reads no project argument: give space_id' };
  if ('none' in found) return { source: 'none', detail: `the project argument: ${found.none}`, refused: invalid(`project: ${found.none}`) };
  const detail = `the project argument: ${found.from}`;
  const chosen = await spaceOf(found, 'argument', detail);
  const spaceId = chosen.space_id ?? chosen.refused?.data.older_space_id;
  if (typeof spaceId !== 'string' || canAccessSpace(caller, spaceId)) return chosen;
  const message = `the project ${found.project ?? text} uses the space '${found.space_id}', which this token may not use (system_whoami lists those it may)`;
  return { source: 'none', detail: `${detail}: ${message}`, refused: new LiveMemError('forbidden', message, { space_id: found.space_id }) };
}

/**
 * A project's space on this connection (core/space/project-space.ts decides), kept once it exists:
 * a project whose space is there costs no more reads of the store per call. An undecided older
 * space is a refusal the call carries (`noDefaultSpace`), and whoami shows.
 */
function projectSpaces(core: Core) {
  const known = new Map<string, { space_id: string; older?: string | undefined }>();
  return async (claim: ProjectClaim & { folder?: string | undefined }, source: SpaceSource, detail: string): Promise<DefaultSpace> => {
    const key = `${claim.space_id}\n${claim.project ?? ''}`;
    let chosen = known.get(key);
    if (!chosen) {
      try {
        const decided = await projectSpace(core.context, claim);
        chosen = decided;
        if (decided.exists) known.set(key, decided);
      } catch (error) {
        if (!isLiveMemError(error, 'conflict')) throw error;
        return { source: 'none', detail: `${detail}: ${error.message}`, refused: error };
      }
    }
    const own = chosen.space_id === claim.space_id;
    return {
      space_id: chosen.space_id,
      source,
      detail: chosen.older ? `${detail}; ${chosen.older}` : detail,
      ...(own && claim.project !== undefined ? { project: claim.project } : {}),
      // The project's folder on this machine, when it was read from one: the checkout its notes' code is read from.
      ...(claim.folder !== undefined ? { folder: claim.folder } : {}),
    };
  };
}

/** An error as a short line: an invalid answer's message is the whole JSON of its schema issues. */
const oneLine = (error: unknown): string => {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
};

/** What the client's roots say: their project, or why they say none. */
type RootsAnswer = FolderProject;

/**
 * The client's roots, followed: asked once the client has said `initialized` (the spec allows no
 * request before), asked again on `notifications/roots/list_changed`, and cached in between (one
 * answer per list, not one per call). A call waits for the answer at most ROOTS_WAIT_MS, so a client
 * that declares roots and never answers costs one wait, not a hung call; that outcome then holds
 * until the roots change, so one connection never moves between two spaces on a late answer.
 */
function followRoots(server: Server, identify: ProjectSpaces['identify'], logger: Logger) {
  let asked: { answer: Promise<RootsAnswer>; outcome?: RootsAnswer } | undefined;
  const declared = () => server.getClientCapabilities()?.roots !== undefined;
  const ask = () => {
    asked = {
      answer: server.listRoots().then(
        ({ roots }) => projectOfRoots(roots, identify),
        (error: unknown) => ({ none: `the client's roots/list failed (${oneLine(error)})` }),
      ),
    };
  };
  server.oninitialized = () => {
    if (declared()) ask();
  };
  server.setNotificationHandler('notifications/roots/list_changed', async () => {
    if (!declared()) return;
    logger.debug('the client says its roots changed: asking them again');
    ask();
  });
  return {
    async answer(): Promise<RootsAnswer | undefined> {
      if (!declared()) return undefined;
      if (!asked) ask(); // a call before `initialized` (a client that skips it)
      const current = asked as NonNullable<typeof asked>;
      if (current.outcome) return current.outcome;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<RootsAnswer>((resolve) => {
        timer = setTimeout(() => resolve({ none: `the client declares roots but did not answer roots/list within ${ROOTS_WAIT_MS / 1000} s` }), ROOTS_WAIT_MS);
      });
      const outcome = await Promise.race([current.answer, late]);
      clearTimeout(timer);
      current.outcome ??= outcome;
      return current.outcome;
    },
  };
}

/**
 * The project of a client's roots: the first root that is a project (the others are folders the
 * client also has open; one space serves a connection).
 */
export function projectOfRoots(roots: Root[], identify: ProjectSpaces['identify']): RootsAnswer {
  const skipped: string[] = [];
  for (const [index, root] of roots.entries()) {
    let dir: string;
    try {
      dir = fileURLToPath(root.uri);
    } catch {
      skipped.push(`the client's root ${root.uri} names no local folder`);
      continue;
    }
    const identity = identify(dir);
    if ('space_id' in identity) {
      const rank = roots.length > 1 ? ` (root ${index + 1} of ${roots.length}, the first that is a project)` : '';
      return { ...identity, from: `the client's root ${root.uri}${rank}: ${identity.from}` };
    }
    skipped.push(`the client's root ${identity.none}`);
  }
  return { none: roots.length === 0 ? 'the client lists no roots' : skipped.join('; ') };
}

/**
 * How a space reads before its first note: as the empty space that note will create, answered by
 * the same tool on a core of its own over an in-memory store where the space was just created with
 * the first note's rules. One mechanism for every read tool, exact by construction, and nothing is
 * written to the real store (reads never create a space).
 */
function newSpaceReads(core: Core): DefaultSpaces['asCreated'] {
  let blank: Core | undefined;
  const created = new Map<string, Promise<unknown>>();
  return async (spaceId, caller) => {
    const { clock, limits, budgets, consolidation, version } = core.context;
    blank ??= createCore({ storage: createMemoryDriver(clock), clock, limits, budgets, consolidation, version });
    let creating = created.get(spaceId);
    if (!creating) {
      creating = blank.spaces.create(ownerCaller(caller.agent), firstNoteSpace(spaceId, caller.agent));
      created.set(spaceId, creating);
    }
    await creating;
    return blank;
  };
}
