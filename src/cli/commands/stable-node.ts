import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { NODE_LINES } from '../../shared/runtime.js';

/**
 * The node a client's configuration should launch. `process.execPath` names the exact version that
 * runs `setup` (`~/.nvm/versions/node/v20.19.0/bin/node`), and a version manager removes or replaces
 * that folder on an upgrade: the client then fails to start live-mem with no word said. When the
 * running node is a manager's, this finds a path that outlives the version — the manager's own shim
 * or default alias, whose default is a supported node — else a system node on a standard path that
 * reports a supported version; with neither, the versioned path is kept and the caller says so.
 * Pure: every look at the disk goes through `NodeLookup`, so tests run on fake trees.
 */

export interface NodeLookup {
  exists(file: string): boolean;
  /** The file's real path (links resolved); the path itself when it cannot be resolved. */
  realpath(file: string): string;
  /** A text file's content; undefined when it cannot be read. */
  read(file: string): string | undefined;
  /** The version (`20.19.0`) a node executable reports; undefined when it does not run. */
  versionOf(file: string): string | undefined;
}

export interface NodeInput {
  /** The running node: process.execPath. */
  execPath: string;
  /** Its version: process.versions.node. */
  version: string;
  platform: NodeJS.Platform;
  home: string;
  env: NodeJS.ProcessEnv;
}

export interface StableNode {
  node: string;
  /** false: the versioned path, kept because nothing stable was found (a Node upgrade needs setup again). */
  stable: boolean;
  /** The version manager the running node belongs to, when it belongs to one. */
  manager?: string;
  /** Where the path comes from, for the output; absent when the running node's own path is already stable. */
  why?: string;
}

/** A stable path a manager offers, and the version it resolves to now (undefined: cannot tell). */
interface Candidate {
  node: string;
  version: string | undefined;
  why: string;
}

interface Manager {
  name: string;
  /** Matched against the real path, with `/` separators: group 1 is the manager's root. */
  pattern: RegExp;
  candidates(root: string, input: NodeInput, look: NodeLookup, join: (...parts: string[]) => string, match: RegExpExecArray): Candidate[];
}

const exe = (platform: NodeJS.Platform) => (platform === 'win32' ? 'node.exe' : 'node');
const bin = (platform: NodeJS.Platform) => (platform === 'win32' ? [exe(platform)] : ['bin', 'node']);

/** The first version a text names: `20`, `v20.19.0`, `20.19` (not `lts/*`, `system`, `latest`). */
const versionIn = (text: string | undefined): string | undefined => /^v?(\d+(?:\.\d+){0,2})$/.exec(text?.trim() ?? '')?.[1];

/** A tool's version in a `.tool-versions` file (asdf, mise): the first one its line names. */
const toolVersion = (text: string | undefined, tools: string[]): string | undefined => {
  for (const line of (text ?? '').split('\n')) {
    const [tool, first] = line.trim().split(/\s+/);
    if (tool && tools.includes(tool)) return versionIn(first);
  }
  return undefined;
};

const MANAGERS: Manager[] = [
  {
    // Volta's shim picks the project's pinned node, else the default toolchain (tools/user/platform.json).
    name: 'volta',
    pattern: /^(.*)\/tools\/image\/node\/[^/]+\/(?:bin\/)?node(?:\.exe)?$/,
    candidates: (root, input, look, join) => {
      let runtime: string | undefined;
      try {
        runtime = (JSON.parse(look.read(join(root, 'tools', 'user', 'platform.json')) ?? '{}') as { node?: { runtime?: string } }).node?.runtime;
      } catch {
        runtime = undefined;
      }
      return [{ node: join(root, 'bin', exe(input.platform)), version: versionIn(runtime), why: "volta's shim" }];
    },
  },
  {
    // fnm's `default` alias is a link to the default version's folder, moved by `fnm default`.
    name: 'fnm',
    pattern: /^(.*)\/node-versions\/[^/]+\/installation\/(?:bin\/)?node(?:\.exe)?$/,
    candidates: (root, input, look, join) => {
      const alias = join(root, 'aliases', 'default');
      const target = look.realpath(alias).replaceAll('\\', '/');
      const version = versionIn(/\/node-versions\/([^/]+)\/installation$/.exec(target)?.[1]);
      return [{ node: join(alias, ...bin(input.platform)), version, why: "fnm's default alias" }];
    },
  },
  {
    // asdf's shim resolves .tool-versions from the working folder up, then the home folder's: a client
    // started in `/` gets the global one, which must name nodejs.
    name: 'asdf',
    pattern: /^(.*)\/installs\/nodejs\/[^/]+\/bin\/node$/,
    candidates: (root, input, look, join) => {
      const file = join(input.home, input.env.ASDF_DEFAULT_TOOL_VERSIONS_FILENAME || '.tool-versions');
      return [{ node: join(root, 'shims', 'node'), version: toolVersion(look.read(file), ['nodejs']), why: "asdf's shim" }];
    },
  },
  {
    name: 'mise',
    pattern: /^(.*)\/installs\/node\/[^/]+\/bin\/node$/,
    candidates: (root, input, look, join) => {
      const config = join(input.env.XDG_CONFIG_HOME || join(input.home, '.config'), 'mise', 'config.toml');
      const pinned = /^\s*node\s*=\s*["']?v?(\d+(?:\.\d+){0,2})["']?\s*$/m.exec(look.read(config) ?? '')?.[1];
      const version = pinned ?? toolVersion(look.read(join(input.home, '.tool-versions')), ['node', 'nodejs']);
      return [{ node: join(root, 'shims', 'node'), version, why: "mise's shim" }];
    },
  },
  {
    // Homebrew's opt link follows the formula (node, or node@20) across `brew upgrade`, never below it.
    name: 'Homebrew',
    pattern: /^(.*)\/Cellar\/(node(?:@\d+)?)\/[^/]+\/bin\/node$/,
    candidates: (root, input, _look, join, match) => {
      const formula = match[2] ?? 'node';
      return [{ node: join(root, 'opt', formula, 'bin', 'node'), version: input.version, why: `Homebrew's link to the ${formula} formula` }];
    },
  },
  // nvm has no shim: a path through it names one version. Its `alias/default` names a version too.
  { name: 'nvm', pattern: /^(.*)\/versions\/node\/[^/]+\/bin\/node$/, candidates: () => [] },
];

/** System nodes a package manager or an installer keeps at one path across upgrades. */
function systemNodes(input: NodeInput, join: (...parts: string[]) => string): string[] {
  if (input.platform === 'win32') return [join(input.env.ProgramFiles || 'C:\\Program Files', 'nodejs', 'node.exe')];
  if (input.platform === 'darwin') return ['/opt/homebrew/bin/node', '/usr/local/bin/node', '/opt/local/bin/node'];
  return ['/usr/local/bin/node', '/usr/bin/node'];
}

/** A node of a line live-mem is tested on (shared/runtime.ts): a system node of another (an odd release) is no better a choice. */
const supported = (version: string | undefined) => version !== undefined && NODE_LINES.some((line) => line.major === Number(version.split('.')[0]));

/** A path that names a version (a folder like `v20.19.0` or `node-v20.11.1-linux-x64`), or a shell's temporary link (fnm). */
const versioned = (file: string) => /(^|\/)[^/]*\d+\.\d+\.\d+[^/]*\//.test(file) || file.includes('/fnm_multishells/');

export function stableNode(input: NodeInput, look: NodeLookup): StableNode {
  const p = input.platform === 'win32' ? path.win32 : path.posix;
  // A path that names no version is kept: a system node, or a link a manager keeps in place across
  // upgrades (Homebrew's bin/node, nvm-windows' symlink) even when it resolves to a versioned folder.
  const given = input.execPath.replaceAll('\\', '/');
  if (!versioned(given) && !MANAGERS.some((manager) => manager.pattern.test(given))) return { node: input.execPath, stable: true };
  const real = look.realpath(input.execPath).replaceAll('\\', '/');
  const found = MANAGERS.map((manager) => ({ manager, match: manager.pattern.exec(real) })).find(({ match }) => match !== null);
  const manager = found?.manager.name;
  const native = (file: string) => (input.platform === 'win32' ? file.replaceAll('/', '\\') : file);
  const offered = found?.match ? found.manager.candidates(native(found.match[1] ?? ''), input, look, p.join, found.match) : [];
  for (const candidate of offered) {
    if (look.exists(candidate.node) && supported(candidate.version))
      return { node: candidate.node, stable: true, ...(manager ? { manager } : {}), why: candidate.why };
  }
  for (const node of systemNodes(input, p.join)) {
    if (look.exists(node) && supported(look.versionOf(node))) {
      return { node, stable: true, ...(manager ? { manager } : {}), why: 'a system node that stays at this path across upgrades' };
    }
  }
  return { node: input.execPath, stable: false, ...(manager ? { manager } : {}) };
}

/** The lookup of a real machine: a candidate's version is what it prints when run. */
export const diskLookup: NodeLookup = {
  exists: (file) => existsSync(file),
  realpath: (file) => {
    try {
      return realpathSync(file);
    } catch {
      return file;
    }
  },
  read: (file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  },
  versionOf: (file) => {
    try {
      return execFileSync(file, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  },
};
