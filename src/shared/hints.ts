import { CONFIRM_AGAIN, type ErrorCode } from './errors.js';

/**
 * What a caller can do next about an error, written once for both shells and worded by each: over
 * MCP a tool (only one the served profile offers) and `confirm=true`, in the CLI a command and
 * `--yes`. It sits here, below the core, so that both shells import one table while the core, which
 * raises the errors, knows neither of them.
 */

/**
 * What an MCP server offers: a hint or a prompt names only tools of the served profile, so a model
 * is never sent to a tool it cannot call. The CLI offers every command.
 */
export interface Offered {
  /** The tools served (a profile's), or every tool. */
  tools: ReadonlySet<string> | 'all';
  /** A live_note to a missing space creates it (LIVE_MEM_AUTO_CREATE_SPACES). */
  autoCreateSpaces: boolean;
  /**
   * A consolidation this client asks for can run: a model endpoint is configured, or the client lends
   * its own (MCP sampling). Without, no text asks an agent to consolidate (the tool would only refuse).
   */
  model: boolean;
  /**
   * The client reaches this server over the network (HTTP): what a person fixes on their own machine
   * (a client's entry, `live-mem setup`) changes nothing here; whoever runs the server does.
   */
  remote?: boolean;
}

export const EVERY_TOOL: Offered = { tools: 'all', autoCreateSpaces: false, model: true };

export const offers = (offered: Offered, tool: string): boolean => offered.tools === 'all' || offered.tools.has(tool);

/** A way forward, as each shell names it; `{space}` is the space the error is about. */
interface Step {
  tool: string;
  /** How a tool call is shown in a sentence, when it needs more than the tool's name. */
  call?: string;
  command: string;
}

export const STEPS = {
  listSpaces: { tool: 'space_list', command: 'live-mem space list' },
  listBank: { tool: 'bank_list', command: 'live-mem bank list <space_id>' },
  createSpace: { tool: 'space_create', call: 'space_create (space_id "{space}")', command: 'live-mem space create {space}' },
  noteCreatesSpace: { tool: 'live_note', call: 'live_note, space_id "{space}"', command: 'live-mem note {space} "…"' },
  checkStore: { tool: 'system_health', command: 'live-mem doctor' },
  checkModel: { tool: 'system_health', command: 'live-mem health' },
} satisfies Record<string, Step>;

export type StepName = keyof typeof STEPS;

/** How one shell says things: its steps, and the words around them. */
export interface Wording {
  shell: 'mcp' | 'cli';
  /** The step as this shell names it (a tool, a quoted command), or '' when this shell does not offer it. */
  step(name: StepName, space?: string): string;
  /** A missing space is created by writing a note to it (MCP: the caller's LIVE_MEM_AUTO_CREATE_SPACES). */
  autoCreateSpaces: boolean;
  /** Doing the same again. */
  again: string;
  /** Doing it again, confirmed: the end of a refused destructive call's message too (see `unconfirmed`). */
  confirm: string;
  /** Who has to want a destructive change. */
  onlyIf: string;
  /** Said when a space is missing and this shell cannot create it. */
  askCreate: string;
  /** How a person gives calls that name no space a default one: in the client's entry, or (HTTP) the server's token. */
  pinSpace: string;
  /** What an agent passes as `project`: its workspace folder, or (HTTP, where a folder means nothing) the git remote. */
  project: string;
  /** Who sets what a config_error names: this machine's settings, or (HTTP) whoever runs the server. */
  configure: string;
}

const fill = (text: string, space = '<space_id>') => text.replaceAll('{space}', space);

/**
 * How a person gives a client's calls a default space: a step for whoever configures the client,
 * not for the agent, so it names the setting and the command in both shells.
 */
export const PIN_SPACE =
  "ask whoever set up this client to pin the project's space: LIVE_MEM_SPACE=NAME in its live-mem entry " +
  '(`live-mem setup <client> --space NAME` writes it)';

/** The same over HTTP: the client's entry does not choose the server's spaces; a token limited to one space does. */
export const PIN_SPACE_REMOTE =
  "ask whoever runs this server for a token limited to the project's space (`live-mem token create NAME -s SPACE` on the server), which then is the default";

const CONFIGURE = 'live-mem is not configured for this; the message says which setting to set';
const CONFIGURE_REMOTE = 'this server is not configured for this: ask whoever runs it to set what the message names, on the server';

/** MCP's wording: the tools `offered` serves, `confirm=true`. */
export function mcpWording(offered: Offered): Wording {
  return {
    shell: 'mcp',
    step: (name, space) => {
      const step: Step = STEPS[name];
      return offers(offered, step.tool) ? fill(step.call ?? step.tool, space) : '';
    },
    autoCreateSpaces: offered.autoCreateSpaces && offers(offered, STEPS.noteCreatesSpace.tool),
    again: 'call again',
    confirm: CONFIRM_AGAIN,
    onlyIf: 'only if the user asked for it',
    askCreate: `ask whoever runs the server to create it (\`${STEPS.createSpace.command}\`)`,
    pinSpace: offered.remote ? PIN_SPACE_REMOTE : PIN_SPACE,
    project: offered.remote ? "your workspace's git remote (`git remote get-url origin` prints it)" : "your workspace folder's absolute path",
    configure: offered.remote ? CONFIGURE_REMOTE : CONFIGURE,
  };
}

/**
 * The CLI's wording: every command, `--yes`. A person is told to create a missing space with
 * `space create` (which takes a description and rules) even where a first note would create it.
 */
export const CLI_WORDING: Wording = {
  shell: 'cli',
  step: (name, space) => `\`${fill(STEPS[name].command, space)}\``,
  autoCreateSpaces: false,
  again: 'run again',
  confirm: 'run again with --yes',
  onlyIf: 'only if you mean it',
  askCreate: `create it with \`${STEPS.createSpace.command}\``,
  pinSpace: PIN_SPACE,
  project: 'the project folder',
  configure: CONFIGURE,
};

/** `a`, `a or b`, `a, b or c`: the steps this shell offers. */
function orList(wording: Wording, names: StepName[]): string {
  const kept = names.map((name) => wording.step(name)).filter(Boolean);
  return kept.length <= 1 ? (kept[0] ?? '') : `${kept.slice(0, -1).join(', ')} or ${kept[kept.length - 1]}`;
}

/**
 * What a caller can do about a space that does not exist, as the end of a sentence (hints and
 * prompts). Near names it may see (`similar`: a typo, or a project's space named in part) are what it
 * most likely meant: they are offered, with how to list the spaces, and creating the mistyped one is not.
 */
export function missingSpaceAdvice(wording: Wording, spaceId: string, similar: readonly string[] = []): string {
  const check = orList(wording, ['listSpaces']);
  if (similar.length > 0) {
    const names = similar.map((name) => `'${name}'`);
    const meant = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
    return `did you mean ${meant}?${check ? ` ${check} lists the spaces` : ''}`;
  }
  const rest = check ? `, or check the name with ${check}` : '';
  if (wording.autoCreateSpaces) return `write a note to it to create it (${wording.step('noteCreatesSpace', spaceId)})${rest}`;
  const create = wording.step('createSpace', spaceId);
  if (create) return `create it with ${create}${rest}`;
  return `check the space_id${check ? ` with ${check}` : ''}, or ${wording.askCreate.replaceAll('{space}', spaceId)}`;
}

/** What the refusal of a call that names no space says when no rule gives it one (mcp/default-space.ts). */
export const NO_DEFAULT_SPACE = 'no default space here';

/**
 * What the refusal of a project's default space says when an older space of its former id records
 * no project (core/space/project-space.ts): the person decides with `live-mem space bind`.
 */
export const PROJECT_MOVED = 'now maps to the space';

/** The situations a hint is about: each error code, and five cases a code alone does not tell apart. */
export type Situation = ErrorCode | 'space_missing' | 'bank_file_missing' | 'unconfirmed' | 'no_default_space' | 'project_moved';

interface About {
  /** The space a `space_missing` error names. */
  space: string;
  /** Spaces near its name that the caller may see (the error's `similar_spaces`, filled by the shells: core/space/similar-spaces.ts). */
  similar?: readonly string[];
}

/**
 * The one hint table: per situation, what to do next, in the given shell's words. None where the
 * message says it all (precondition_failed, unsupported and internal never reach a caller as such).
 */
export const HINTS: Partial<Record<Situation, (w: Wording, about: About) => string>> = {
  space_missing: (w, { space, similar }) => {
    const advice = missingSpaceAdvice(w, space, similar);
    return `The space does not exist: ${advice}${advice.endsWith('?') ? '' : '.'}`;
  },
  // space_list names no file: the bank's own listing does.
  bank_file_missing: (w) => {
    const list = w.step('listBank');
    return list ? `Check the file name: ${list} lists the bank's files.` : `Check the file name and ${w.again}.`;
  },
  not_found: (w) => {
    const check = orList(w, ['listSpaces', 'listBank']);
    return check ? `Check the name with ${check}.` : `Check the name and ${w.again}.`;
  },
  unconfirmed: (w) => `Nothing was changed; ${w.confirm} ${w.onlyIf}.`,
  no_default_space: (w) => {
    const list = w.step('listSpaces');
    const named = `space_id${list ? ` (${list} shows the spaces)` : ''}`;
    // An agent knows the project it works in: that is the fix it can make itself (mcp/default-space.ts).
    if (w.shell === 'mcp') return `Give project, ${w.project}, or ${named}; or ${w.pinSpace}.`;
    return `Give ${named}, or ${w.pinSpace}.`;
  },
  project_moved: () =>
    "Nothing was read or written. Which space this project uses is a person's choice: the message names the command that makes it, once, in the project, for every client.",
  already_exists: () => 'Pick another space id, or use the existing space.',
  invalid_input: (w) => `Fix the argument named in the message and ${w.again}.`,
  conflict: (w) => `Another writer holds this; wait a moment and ${w.again}.`,
  forbidden: () => 'This token lacks the permission or the space; ask an admin.',
  storage_error: (w) => {
    const check = w.step('checkStore');
    return `The store failed; ${check ? `check it with ${check}, or ` : ''}retry later.`;
  },
  llm_error: (w) => {
    const check = w.step('checkModel');
    return `The model failed or answered unusably; nothing was changed. Retry later${check ? ` (${check} says whether the model is reachable)` : ''}.`;
  },
  quota_exceeded: () => 'A daily token cap is reached; nothing was sent. Wait for the next UTC day, or ask an admin to raise the cap the message names.',
  config_error: (w) => `${w.configure}.`,
};

const SPACE_MISSING = /^space '(.*)' does not exist$/;
const BANK_FILE_MISSING = /^bank file '.*' does not exist in space '/;

/** The names an error's data offers for a missing space (`similar_spaces`), if any. */
const similarOf = (data: Record<string, unknown> | undefined): string[] | undefined => {
  const similar = data?.similar_spaces;
  return Array.isArray(similar) ? similar.filter((name): name is string => typeof name === 'string') : undefined;
};

/** Which situation an error is: its code, told apart further by the message the core gives it (and its data). */
export function situationOf(code: string, message: string, data?: Record<string, unknown>): { situation: Situation; about: About } {
  const space = code === 'not_found' ? SPACE_MISSING.exec(message)?.[1] : undefined;
  const similar = similarOf(data);
  if (space !== undefined) return { situation: 'space_missing', about: { space, ...(similar ? { similar } : {}) } };
  if (code === 'not_found' && BANK_FILE_MISSING.test(message)) return { situation: 'bank_file_missing', about: { space: '' } };
  if (code === 'invalid_input' && message.endsWith(CONFIRM_AGAIN)) return { situation: 'unconfirmed', about: { space: '' } };
  if (code === 'invalid_input' && message.includes(NO_DEFAULT_SPACE)) return { situation: 'no_default_space', about: { space: '' } };
  if (code === 'conflict' && message.includes(PROJECT_MOVED)) return { situation: 'project_moved', about: { space: '' } };
  return { situation: code as Situation, about: { space: '' } };
}

/** The hint for an error (its code, the core's message and its data), in a shell's words; undefined when there is none. */
export function hintFor(code: string, message: string, wording: Wording, data?: Record<string, unknown>): string | undefined {
  const { situation, about } = situationOf(code, message, data);
  return Object.hasOwn(HINTS, situation) ? HINTS[situation]?.(wording, about) : undefined;
}
