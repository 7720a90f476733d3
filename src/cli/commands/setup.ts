import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { validateSpaceId } from '../../core/validate.js';
import type { SpaceMode } from '../../mcp/default-space.js';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { shownUrl } from '../../shared/shown-url.js';
import type { CommandDef } from '../command.js';
import { apply, backupStamp, type FileChange, isFolder, type Planned, plan, secretFrom } from './setup-files.js';
import { remoteWarnings } from './remote-checks.js';
import { setupModelCommand } from './setup-model.js';
import { claudeSettingsFile, hookCommand, hookGroup, mergeHook } from './setup-hooks.js';
import { refuseRemoteMismatch, remoteEntry } from './setup-remote.js';
import { NODE_LINES } from '../../shared/runtime.js';
import { CLIENTS, type Client, type Place, type Scope, type ServerEntry, type SetupGlobals, type SetupOptions } from './setup-options.js';
import { diskLookup, type NodeLookup, stableNode } from './stable-node.js';
import { PUBLISHED_VERSION, VERSION } from '../version.js';

/**
 * `live-mem setup <client>`: writes the MCP server entry into a client's configuration file — a
 * process it launches on the local store, or with --url a live-mem server over HTTP in the client's
 * own form — with --rules the memory workflow into the project's rules file, and with --hooks
 * (Claude Code) a hook that loads the project's memory into each session. Each file's content is
 * computed from its old content by pure functions (mergeServer, mergeRules, mergeHook), so a second
 * run finds nothing to change.
 */

const pathOf = (platform: NodeJS.Platform) => (platform === 'win32' ? path.win32 : path.posix);

/** The folder desktop applications (Electron: Claude Desktop, VS Code) keep their settings in. */
function appData(place: Place): string {
  const p = pathOf(place.platform);
  if (place.platform === 'win32') return place.env.APPDATA || p.join(place.home, 'AppData', 'Roaming');
  if (place.platform === 'darwin') return p.join(place.home, 'Library', 'Application Support');
  return place.env.XDG_CONFIG_HOME || p.join(place.home, '.config');
}

/** The configuration file of a client: Claude Code and Cursor have a user file and a project file; the others one file. */
export function configFile(client: Client, scope: Scope, place: Place): string {
  const p = pathOf(place.platform);
  if (scope === 'project' && (client === 'claude-desktop' || client === 'cline')) {
    throw invalid(`${client} has no project configuration: drop --scope project (its configuration is per user)`);
  }
  switch (client) {
    case 'claude-code':
      return scope === 'project' ? p.join(place.project, '.mcp.json') : p.join(place.home, '.claude.json');
    case 'cursor':
      return scope === 'project' ? p.join(place.project, '.cursor', 'mcp.json') : p.join(place.home, '.cursor', 'mcp.json');
    case 'claude-desktop':
      return p.join(appData(place), 'Claude', 'claude_desktop_config.json');
    case 'cline':
      return p.join(appData(place), 'Code', 'User', 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json');
  }
}

/**
 * The project's rules file a client reads, and what a new one starts with (Cursor's rule files need
 * front matter to apply to every chat). Cline reads `.clinerules` as a file, or as a folder of files.
 */
export function rulesFile(client: Client, place: Place, clinerulesIsFolder = false): { file: string; header: string } {
  const p = pathOf(place.platform);
  switch (client) {
    case 'claude-code':
      return { file: p.join(place.project, 'CLAUDE.md'), header: '' };
    case 'cursor':
      return {
        file: p.join(place.project, '.cursor', 'rules', 'live-mem.mdc'),
        header: '---\ndescription: How to use the shared live-mem memory\nalwaysApply: true\n---\n\n',
      };
    case 'cline':
      return { file: clinerulesIsFolder ? p.join(place.project, '.clinerules', 'live-mem.md') : p.join(place.project, '.clinerules'), header: '' };
    case 'claude-desktop':
      throw invalid(
        'claude-desktop has no project rules file: paste the workflow (docs/tools.md, "The memory workflow for agents") into a Project\'s instructions',
      );
  }
}

/** Keys of an older entry that belong to one transport: an entry of the other must not keep them. */
const STDIO_KEYS = ['command', 'args', 'env', 'cwd'];
const HTTP_KEYS = ['url', 'headers', 'serverUrl', 'headersHelper'];
/** Keys that name the transport: only those the new entry sets survive. */
const TRANSPORT_KEYS = ['type', 'transportType'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The configuration file's new text with `name` set to `entry`; `undefined` when it already says so
 * (nothing to write). Every other key and server is kept; so are the extra keys of an existing entry
 * (Cline's `autoApprove`, an env variable or a header the user added), while the transport's own
 * keys and our variables or Authorization header are brought up to date, and the keys of the other
 * transport dropped (an entry switched between stdio and HTTP). Refuses a file that is not a JSON
 * object: nothing is written then.
 */
export function mergeServer(old: string | undefined, name: string, entry: ServerEntry, file: string): string | undefined {
  let config: unknown = {};
  if (old !== undefined && old.trim() !== '') {
    try {
      config = JSON.parse(old);
    } catch (error) {
      throw invalid(`${file} is not valid JSON (${(error as Error).message}): fix it or move it away, then run setup again; nothing was written`);
    }
  }
  if (!isObject(config)) throw invalid(`${file} does not hold a JSON object: fix it or move it away, then run setup again; nothing was written`);
  const servers = config.mcpServers ?? {};
  if (!isObject(servers)) throw invalid(`${file}: "mcpServers" is not an object: fix it, then run setup again; nothing was written`);
  const previous = isObject(servers[name]) ? servers[name] : {};
  const http = 'url' in entry;
  const dropped = new Set([...(http ? STDIO_KEYS : HTTP_KEYS), ...TRANSPORT_KEYS]);
  const kept = Object.fromEntries(Object.entries(previous).filter(([key]) => !dropped.has(key)));
  const [mapKey, ours] = http ? ['headers', entry.headers] : ['env', entry.env];
  const map = { ...(isObject(previous[mapKey]) ? previous[mapKey] : {}), ...ours };
  const updated = { ...kept, ...entry, [mapKey]: map };
  if (isDeepStrictEqual(servers[name], updated)) return undefined;
  return `${JSON.stringify({ ...config, mcpServers: { ...servers, [name]: updated } }, null, 2)}\n`;
}

export const RULES_START = '<!-- live-mem:start -->';
export const RULES_END = '<!-- live-mem:end -->';

/** The marked block --rules writes: the server's own instructions, so the two never say different things. */
export const rulesBlock = (workflow: string): string => `${RULES_START}\n## Shared memory (live-mem)\n\n${workflow.trim()}\n${RULES_END}\n`;

/**
 * The rules file's new text: the marked block replaced where it is, else appended after the user's
 * text (a new file starts with `header`); `undefined` when the block is already there as it should be.
 */
export function mergeRules(old: string | undefined, block: string, header: string, file: string): string | undefined {
  if (old === undefined || old.trim() === '') return header + block;
  const start = old.indexOf(RULES_START);
  if (start === -1) return `${old.replace(/\n*$/, '\n\n')}${block}`;
  const end = old.indexOf(RULES_END, start);
  if (end === -1) throw invalid(`${file} has "${RULES_START}" without "${RULES_END}": mend or remove the block, then run setup again; nothing was written`);
  const after = old.slice(end + RULES_END.length).replace(/^\n/, '');
  const next = old.slice(0, start) + block + after;
  return next === old ? undefined : next;
}

/** How the client launches live-mem: this installation's node and bin. */
export const launchEntry = (options: { bin: string; node: string }): { command: string; args: string[] } => ({ command: options.node, args: [options.bin] });

/**
 * `--npx`: npx with this very version from the registry (`live-mem@0.1.0`), once it is published
 * (`published`, PUBLISHED_VERSION); until then refused, saying why and what to do instead: an entry
 * naming a package the registry does not hold cannot start, and would run whoever registers the name.
 */
export function npxEntry(version: string, published: string | undefined): { command: string; args: string[] } {
  if (published !== version) {
    throw invalid(
      `--npx: live-mem ${version} is not on the npm registry${published ? ` (${published} is)` : ''}, so \`npx -y live-mem\` cannot start it ` +
        '(and would run whatever someone registers under that name): leave out --npx, and the entry launches this installation (its node and bin/live-mem.cjs)',
    );
  }
  return { command: 'npx', args: ['-y', `live-mem@${version}`] };
}

/** This package's bin/live-mem.cjs, found from the running module (the bundle in dist/cli/, or src/ under tsx). */
export function installedBin(from: string = import.meta.url): string {
  for (let dir = path.dirname(fileURLToPath(from)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'live-mem') {
      return path.join(dir, 'bin', 'live-mem.cjs');
    }
  }
  throw invalid('cannot find the live-mem package this command runs from: run setup from an installed live-mem (npm install -g, or a checkout)');
}

export interface SetupContext {
  place?: Place;
  bin?: string;
  /** The running node (process.execPath) and its version: stableNode finds what the entry should launch. */
  node?: string;
  nodeVersion?: string;
  lookup?: NodeLookup;
  /** The memory workflow for a client served `tools` (a profile or names; undefined: a remote server's, unknown), its space found as `space` says. */
  workflow?: (tools: string | undefined, space: SpaceMode) => Promise<string>;
  now?: () => Date;
  /** The version on the registry (default PUBLISHED_VERSION): --npx pins this version only when it is published. */
  published?: string;
}

/**
 * The clients that start a server in `/` and send no MCP roots (Cline: cline/cline#9950): without a
 * pinned space, their agent names its project on each call (mcp/default-space.ts).
 */
const STARTED_NOWHERE: readonly Client[] = ['claude-desktop', 'cline'];

/** The profile an agent needs while it works (docs/tools.md, "Tool profiles"): `all` costs every conversation 2.7 times the tokens. */
export const DEFAULT_TOOLS = 'agent';

export async function setup(client: string, options: SetupOptions, globals: SetupGlobals, context: SetupContext = {}): Promise<Record<string, unknown>> {
  if (!(CLIENTS as readonly string[]).includes(client)) throw invalid(`unknown client '${client}': one of ${CLIENTS.join(', ')}`);
  const which = client as Client;
  const place = context.place ?? { platform: process.platform, home: os.homedir(), env: process.env, project: path.resolve(options.project ?? '.') };
  if (options.scope !== undefined && options.scope !== 'user' && options.scope !== 'project')
    throw invalid(`--scope is user or project, not '${String(options.scope)}'`);
  const scope = options.scope ?? 'user';
  if (options.hooks && which !== 'claude-code') throw invalid(`--hooks is for claude-code (SessionStart hooks); ${which} has none`);
  refuseRemoteMismatch(which, options, globals);
  const file = options.file ? path.resolve(options.file) : configFile(which, scope, place);
  const name = options.name ?? 'live-mem';
  const space = options.space === undefined ? undefined : validateSpaceId(options.space);
  const tokenFile = globals.tokenFile === undefined ? undefined : path.resolve(globals.tokenFile);
  const token = tokenFile === undefined ? undefined : await secretFrom(tokenFile, '--token-file');
  const notes: string[] = [];

  const launchesProcess = options.url === undefined || which === 'claude-desktop';
  const { launch, launches } = launchOf(which, { npx: options.npx === true, launchesProcess }, place, context, notes);

  let entry: ServerEntry;
  let secret = false;
  // The tools the configured process serves; a server over HTTP serves what its operator chose.
  let served: string | undefined;
  if (options.url !== undefined) {
    // The server lists its default profile (agent, unless its operator chose another) to a client that asks for none.
    served = globals.tools === undefined ? undefined : await checkedTools(globals.tools);
    const where = { url: options.url, tools: served, tokenEnv: options.tokenEnv, scope, file, fileGiven: options.file !== undefined };
    const remote = remoteEntry(which, where, launch, tokenFile && token ? { file: tokenFile, value: token } : undefined);
    ({ entry, secret } = remote);
    notes.push(...(await remoteWarnings(new URL(options.url), tokenFile)), ...remote.notes);
  } else {
    const env: Record<string, string> = {
      LIVE_MEM_AGENT: globals.agent ?? which,
      ...(globals.home ? { LIVE_MEM_HOME: path.resolve(globals.home) } : {}),
      ...(globals.config ? { LIVE_MEM_CONFIG: path.resolve(globals.config) } : {}),
      ...(globals.storage ? { LIVE_MEM_STORAGE: globals.storage } : {}),
      LIVE_MEM_TOOLS: await checkedTools(globals.tools ?? DEFAULT_TOOLS),
      ...(space ? { LIVE_MEM_SPACE: space } : {}),
    };
    served = env.LIVE_MEM_TOOLS;
    // The launched process reads the token file itself: the secret stays in that one file.
    entry = { ...launch, args: [...launch.args, ...(tokenFile ? ['--token-file', tokenFile] : [])], env };
    if (!space && STARTED_NOWHERE.includes(which))
      notes.push(
        `${which} starts live-mem in / and says nothing of the project it works in: its agent names the project on each call ` +
          "(the `project` argument: its workspace folder), as the server's instructions ask; --space NAME pins one space instead",
      );
  }
  const spaceMode: SpaceMode = space ? 'default' : options.url !== undefined ? 'remote' : STARTED_NOWHERE.includes(which) ? 'project' : 'default';

  const rules = options.rules ? rulesFile(which, place, await isFolder(path.join(place.project, '.clinerules'))) : undefined;
  const block = rules ? rulesBlock(await (context.workflow ?? defaultWorkflow)(served, spaceMode)) : undefined;
  const hook = options.hooks ? hookGroup(hookCommand(launch, globals, tokenFile, space)) : undefined;
  const hooksFile = hook ? claudeSettingsFile(scope, place) : undefined;
  if (hook)
    notes.push(
      `hook: each new Claude Code session (and one after /clear or a compaction) starts with the memory of ${space ? `space ${space}` : "the project's space"}`,
    );
  const summary = {
    status: 'ok',
    client: which,
    server: name,
    ...(options.url !== undefined ? { connects: shownUrl(options.url) } : {}),
    ...('command' in entry ? { launches, env: entry.env } : {}),
    notes,
  };
  // Each file: the text --print shows (the part setup owns), and how a run merges it into the old text.
  const pieces: Array<{ kind: FileChange['kind']; file: string; shown: string; merge: (old: string | undefined) => string | undefined; secret?: boolean }> = [
    { kind: 'config', file, shown: json({ mcpServers: { [name]: entry } }), merge: (old) => mergeServer(old, name, entry, file), secret },
  ];
  if (rules && block) pieces.push({ kind: 'rules', file: rules.file, shown: block, merge: (old) => mergeRules(old, block, rules.header, rules.file) });
  if (hook && hooksFile)
    pieces.push({ kind: 'hooks', file: hooksFile, shown: json({ hooks: { SessionStart: [hook] } }), merge: (old) => mergeHook(old, hook, hooksFile) });

  if (options.print) {
    // What would be written, but a token: shown as where it comes from, never on a terminal or in a log.
    const masked = (text: string) => (token === undefined ? text : text.replaceAll(token, `<the token in ${tokenFile}>`));
    const files = pieces.map(
      ({ kind, file: shown, shown: content, secret: holds }): FileChange => ({
        kind,
        file: shown,
        action: 'not written (--print)',
        content: masked(content),
        ...(holds ? { secret: holds } : {}),
      }),
    );
    const into = pieces.length === 1 ? `merge it into ${file}, keeping what is there` : 'merge each block into the file named above it, keeping what is there';
    return { ...summary, files, message: `nothing written (--print): ${into}` };
  }
  // Every file is computed before any is written: a malformed one stops the command with nothing changed.
  const planned: Planned[] = [];
  for (const piece of pieces) planned.push(await plan(piece.kind, piece.file, piece.merge, piece.secret === true));
  const stamp = backupStamp((context.now ?? (() => new Date()))());
  const files: FileChange[] = [];
  for (const one of planned) files.push(await apply(one, stamp));
  const changed = files.some((change) => change.action !== 'unchanged');
  return {
    ...summary,
    files,
    message: changed ? `done: restart ${which} (or reload its MCP servers) to load it` : 'already set up: nothing changed',
  };
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * What the client launches (a stdio entry, the hook, Claude Desktop's bridge): this installation's
 * bin with a node that outlives a Node upgrade (stableNode), or npx; `notes` gets what the output
 * must say about that node. An HTTP entry launches nothing: no node to find, none to warn about.
 */
function launchOf(
  which: Client,
  options: { npx: boolean; launchesProcess: boolean },
  place: Place,
  context: SetupContext,
  notes: string[],
): { launch: { command: string; args: string[] }; launches: string } {
  if (options.npx) {
    const launch = npxEntry(VERSION, 'published' in context ? context.published : PUBLISHED_VERSION);
    return { launch, launches: `${launch.command} ${launch.args.join(' ')} (this version, from the npm registry)` };
  }
  if (!options.launchesProcess) return { launch: { command: '', args: [] }, launches: '' };
  const input = { execPath: context.node ?? process.execPath, version: context.nodeVersion ?? process.versions.node, ...place };
  const node = stableNode(input, context.lookup ?? diskLookup);
  if (node.why) notes.push(`node: ${node.node}, ${node.why}, instead of the path of this one version: the entry outlives a Node upgrade`);
  if (!node.stable) {
    const whose = node.manager ? ` of ${node.manager}` : '';
    notes.push(
      `node: ${node.node} names one Node version${whose} and no stable path to a Node of a supported line (${NODE_LINES.map((line) => line.major).join(', ')}) was found: after a Node upgrade, run \`live-mem setup ${which}\` again`,
    );
  }
  const launch = launchEntry({ node: node.node, bin: context.bin ?? installedBin() });
  return { launch, launches: `${launch.command} ${launch.args.join(' ')} (this installation)` };
}

/** A tools setting as serving checks it (a profile or tool names): an unknown name is refused now, not when the client starts. */
async function checkedTools(spec: string): Promise<string> {
  const normalized = spec
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .join(',');
  try {
    (await import('../../mcp/profiles.js')).selectTools(normalized);
  } catch (error) {
    throw isLiveMemError(error) ? invalid(`--tools: ${error.message}`) : error;
  }
  return normalized;
}

/**
 * The server's instructions for the tools it will serve (the rules never name a tool the agent lacks),
 * with the consolidation step: the rules file is the project's, read on machines that may have a model.
 * Imported only here: shell commands never load the MCP server.
 */
const defaultWorkflow = async (tools: string | undefined, space: SpaceMode): Promise<string> => {
  const [{ serverInstructions }, { selectTools }, { EVERY_TOOL }] = await Promise.all([
    import('../../mcp/server.js'),
    import('../../mcp/profiles.js'),
    import('../../shared/hints.js'),
  ]);
  if (tools === undefined) return serverInstructions(EVERY_TOOL, space);
  return serverInstructions({ ...EVERY_TOOL, tools: new Set(selectTools(tools).tools.map((tool) => tool.name)) }, space);
};

export const setupCommands: CommandDef = {
  name: 'setup <client>',
  description: `connect an MCP client: write live-mem into its configuration (${CLIENTS.join(', ')}), keeping its other servers`,
  options: [
    { flags: '--print', description: 'only show the entry (and the rules block, the hook) and the file it belongs in; write nothing' },
    { flags: '--rules', description: "also write the memory workflow into the project's rules file (CLAUDE.md, .cursor/rules/live-mem.mdc, .clinerules)" },
    { flags: '--hooks', description: "claude-code: also a SessionStart hook that loads the project's memory (`live-mem context`) into each new session" },
    { flags: '--space <space_id>', description: 'pin the space calls without a space_id use (LIVE_MEM_SPACE; default: the project the client works in)' },
    { flags: '--url <url>', description: 'a live-mem server over HTTP (serve --http) instead of a process on the local store; the token from --token-file' },
    { flags: '--token-env <name>', description: 'with --url: the entry names this environment variable instead of holding the token (claude-code, cursor)' },
    {
      flags: '--npx',
      description: 'launch this version from the npm registry (`npx -y live-mem@VERSION`) instead of this installation; refused while it is not published',
    },
    {
      flags: '--scope <scope>',
      description: 'claude-code, cursor: the user configuration, or the project one (.mcp.json, .cursor/mcp.json)',
      choices: ['user', 'project'],
    },
    { flags: '--project <dir>', description: 'the project folder for --scope project and --rules (default: the working folder)' },
    { flags: '--file <file>', description: "write this configuration file instead of the client's usual one (VS Code Insiders, VSCodium…)" },
    { flags: '--name <name>', description: 'the server name in the configuration (default live-mem)' },
  ],
  help: [
    '',
    'The global --tools (default here: agent, the 12 tools an agent works with), --token-file (the token the entry uses),',
    '--agent, --home, --config and --storage go into the entry; with --url, --tools goes into the URL (?tools=).',
    '',
    'Examples:',
    '  live-mem setup claude-desktop',
    '  live-mem --agent reviewer setup cursor --scope project --rules --space webapp',
    '  live-mem setup claude-code --hooks',
    '  live-mem setup cline --url https://memory.example.com/mcp --token-file ~/.live-mem-token',
    '  live-mem setup model --base-url https://api.openai.com/v1 --model gpt-4.1-mini --api-key-env OPENAI_API_KEY',
  ].join('\n'),
  storeless: (globals, client: string, options: SetupOptions) => setup(client, options, globals),
  view: 'setup',
  commands: [setupModelCommand],
};
