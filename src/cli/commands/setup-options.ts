/** What `live-mem setup` is asked (setup.ts): the client, where its files are, the options and global flags, and the entries it writes. */

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

/** A stdio entry: the command the client launches, the shape every one of these clients reads. */
export interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** An HTTP entry, in a client's own form: Claude Code's `type: http`, Cline's `type: streamableHttp`, Cursor's bare `url`. */
export interface HttpEntry {
  type?: string;
  url: string;
  headers: Record<string, string>;
}

export type ServerEntry = StdioEntry | HttpEntry;

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
  /** Pins the space every call without a space_id uses (LIVE_MEM_SPACE in the entry). */
  space?: string;
  /** A live-mem server over HTTP, instead of a process the client launches on a local store. */
  url?: string;
  /** With --url: the environment variable the client expands into the Authorization header. */
  tokenEnv?: string;
  /** claude-code: a SessionStart hook that loads the project's memory into each new session. */
  hooks?: boolean;
}

/** The global flags setup reads: what the entry's env (or the hook's command) carries, and the token. */
export interface SetupGlobals {
  agent?: string | undefined;
  home?: string | undefined;
  storage?: string | undefined;
  tools?: string | undefined;
  config?: string | undefined;
  /** The token the entry uses: read by the launched process (stdio, Claude Desktop's bridge), or written into an HTTP entry. */
  tokenFile?: string | undefined;
}
