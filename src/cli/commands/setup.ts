import { constants, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { invalid } from '../../shared/errors.js';

/**
 * `live-mem setup <client>`: writes the MCP server entry into a client's configuration file, and
 * with --rules the memory workflow into the project's rules file. The content is computed from the
 * old content by pure functions (mergeServer, mergeRules), so a second run finds nothing to change.
 */

export const CLIENTS = ['claude-code', 'claude-desktop', 'cursor', 'cline'] as const;
export type Client = (typeof CLIENTS)[number];
export type Scope = 'user' | 'project';

/** Where the configuration files are: the OS, the user's home, the environment (APPDATA, XDG_CONFIG_HOME), the project. */
export interface Place {
  platform: NodeJS.Platform;
  home: string;
  env: NodeJS.ProcessEnv;
  project: string;
}

/** One `mcpServers` entry, the shape every one of these clients reads. */
export interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

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
      throw invalid('claude-desktop has no project rules file: paste the workflow (README, "Memory workflow for agents") into a Project\'s instructions');
  }
}

/** Keys of an older entry that belong to another transport: a stdio entry must not keep them. */
const OTHER_TRANSPORT = new Set(['url', 'type', 'headers', 'transportType', 'serverUrl']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The configuration file's new text with `name` set to `entry`; `undefined` when it already says so
 * (nothing to write). Every other key and server is kept; so are the extra keys of an existing entry
 * (Cline's `autoApprove`, an env variable the user added), while command, args and our env variables
 * are brought up to date. Refuses a file that is not a JSON object: nothing is written then.
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
  const kept = Object.fromEntries(Object.entries(previous).filter(([key]) => !OTHER_TRANSPORT.has(key)));
  const env = { ...(isObject(previous.env) ? previous.env : {}), ...entry.env };
  const updated = { ...kept, command: entry.command, args: entry.args, env };
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

/** How the client launches live-mem: this installation's node and bin, or npx once the package is on the registry. */
export function launchEntry(options: { npx?: boolean | undefined; bin: string; node: string }): { command: string; args: string[] } {
  return options.npx ? { command: 'npx', args: ['-y', 'live-mem'] } : { command: options.node, args: [options.bin] };
}

/** This package's bin/live-mem.cjs, found from the running module (the bundle in dist/cli/, or src/ under tsx). */
export function installedBin(from: string = import.meta.url): string {
  for (let dir = path.dirname(fileURLToPath(from)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'live-mem') {
      return path.join(dir, 'bin', 'live-mem.cjs');
    }
  }
  throw invalid('cannot find the live-mem package this command runs from: use --npx');
}

export interface SetupOptions {
  print?: boolean;
  rules?: boolean;
  npx?: boolean;
  scope?: Scope;
  /** The project folder (project configuration, rules file); default the working folder. */
  project?: string;
  /** Another configuration file than the client's usual one (VS Code Insiders, VSCodium…). */
  file?: string;
  name?: string;
}

/** What the global flags put in the entry's env: the agent name always, the store and tools when given. */
export interface SetupGlobals {
  agent?: string | undefined;
  home?: string | undefined;
  storage?: string | undefined;
  tools?: string | undefined;
  config?: string | undefined;
}

export interface FileChange {
  kind: 'config' | 'rules';
  file: string;
  /** created, updated, unchanged; with --print, the text it would hold is in `content` instead. */
  action: 'created' | 'updated' | 'unchanged' | 'not written (--print)';
  backup?: string;
  content?: string;
}

export async function setup(
  client: string,
  options: SetupOptions,
  globals: SetupGlobals,
  context: { place?: Place; bin?: string; node?: string; workflow?: () => Promise<string>; now?: () => Date } = {},
): Promise<Record<string, unknown>> {
  if (!(CLIENTS as readonly string[]).includes(client)) throw invalid(`unknown client '${client}': one of ${CLIENTS.join(', ')}`);
  const which = client as Client;
  const place = context.place ?? { platform: process.platform, home: os.homedir(), env: process.env, project: path.resolve(options.project ?? '.') };
  if (options.scope !== undefined && options.scope !== 'user' && options.scope !== 'project')
    throw invalid(`--scope is user or project, not '${String(options.scope)}'`);
  const file = options.file ? path.resolve(options.file) : configFile(which, options.scope ?? 'user', place);
  const name = options.name ?? 'live-mem';
  const launch = launchEntry({ npx: options.npx, node: context.node ?? process.execPath, bin: options.npx ? '' : (context.bin ?? installedBin()) });
  const env: Record<string, string> = {
    LIVE_MEM_AGENT: globals.agent ?? which,
    ...(globals.home ? { LIVE_MEM_HOME: path.resolve(globals.home) } : {}),
    ...(globals.config ? { LIVE_MEM_CONFIG: path.resolve(globals.config) } : {}),
    ...(globals.storage ? { LIVE_MEM_STORAGE: globals.storage } : {}),
    ...(globals.tools ? { LIVE_MEM_TOOLS: globals.tools } : {}),
  };
  const entry: ServerEntry = { ...launch, env };
  const rules = options.rules ? rulesFile(which, place, await isFolder(path.join(place.project, '.clinerules'))) : undefined;
  const block = rules ? rulesBlock(await (context.workflow ?? defaultWorkflow)()) : undefined;
  const launches = options.npx ? 'npx -y live-mem (the package from the registry)' : `${launch.command} ${launch.args.join(' ')} (this installation)`;
  const summary = { status: 'ok', client: which, server: name, launches, env };

  if (options.print) {
    const files: FileChange[] = [
      { kind: 'config', file, action: 'not written (--print)', content: `${JSON.stringify({ mcpServers: { [name]: entry } }, null, 2)}\n` },
      ...(rules && block ? [{ kind: 'rules' as const, file: rules.file, action: 'not written (--print)' as const, content: block }] : []),
    ];
    return { ...summary, files, message: 'nothing written (--print): merge this into the file named' };
  }

  // Both files are computed before either is written: a malformed one stops the command with nothing changed.
  const target = await resolveLink(file);
  const oldConfig = await readIfExists(target);
  const newConfig = mergeServer(oldConfig, name, entry, file);
  const rulesTarget = rules ? await resolveLink(rules.file) : undefined;
  const oldRules = rulesTarget ? await readIfExists(rulesTarget) : undefined;
  const newRules = rules && block ? mergeRules(oldRules, block, rules.header, rules.file) : undefined;
  const stamp = (context.now ?? (() => new Date()))().toISOString().replace(/[:.]/g, '-');
  const files = [await apply('config', file, target, oldConfig, newConfig, stamp)];
  if (rules && rulesTarget) files.push(await apply('rules', rules.file, rulesTarget, oldRules, newRules, stamp));
  const changed = files.some((change) => change.action !== 'unchanged');
  return {
    ...summary,
    files,
    message: changed ? `done: restart ${which} (or reload its MCP servers) to load it` : 'already set up: nothing changed',
  };
}

/** Writes one file: a copy of the old one beside it first, then the new text through a temporary file and a rename. */
async function apply(
  kind: FileChange['kind'],
  shown: string,
  target: string,
  old: string | undefined,
  next: string | undefined,
  stamp: string,
): Promise<FileChange> {
  if (next === undefined) return { kind, file: shown, action: 'unchanged' };
  await mkdir(path.dirname(target), { recursive: true });
  let backup: string | undefined;
  let mode: number | undefined;
  if (old !== undefined) {
    backup = `${target}.bak-${stamp}`;
    await copyFile(target, backup, constants.COPYFILE_EXCL);
    mode = (await stat(target)).mode & 0o777;
  }
  const temporary = `${target}.live-mem-setup-${process.pid}`;
  try {
    await writeFile(temporary, next, { mode: mode ?? 0o644 });
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return { kind, file: shown, action: old === undefined ? 'created' : 'updated', ...(backup ? { backup } : {}) };
}

/** The server's own workflow text, imported only here: shell commands never load the MCP server. */
const defaultWorkflow = async (): Promise<string> => (await import('../../mcp/server.js')).SERVER_INSTRUCTIONS;

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A configuration file kept as a link (dotfiles): written where it points, the link left as it is. */
async function resolveLink(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

async function isFolder(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isDirectory();
  } catch {
    return false;
  }
}
