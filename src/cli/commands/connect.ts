import type { LogLevel } from '../../shared/log.js';
import { createLogger } from '../../shared/log.js';
import { invalid } from '../../shared/errors.js';
import { hasUserInfo, shownUrl } from '../../shared/shown-url.js';
import type { CommandDef } from '../command.js';
import type { GlobalOptions } from '../open.js';
import { remoteWarnings } from './remote-checks.js';
import { secretFrom } from './setup-files.js';

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'silent'];

/**
 * `live-mem connect <url>`: serves MCP on stdio by relaying it to a live-mem server over HTTP, for
 * a client that can only launch a process (what `setup claude-desktop --url` writes). It opens no
 * store and reads no settings file: the server has them. The token comes from --token-file (the
 * secret stays in that file), else LIVE_MEM_TOKEN. stdout is the protocol: nothing else is written there.
 * The URL is shown (stderr, errors) without credentials (shared/shown-url.ts); one with a user or
 * password is refused (fetch sends none from a URL: the token is the credential). A token file others
 * can read, or a token in clear to another machine, is warned about on stderr (remote-checks.ts).
 */
export async function connect(raw: string, globals: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`connect needs the server's http(s) URL (https://memory.example.com/mcp), got ${JSON.stringify(shownUrl(raw))}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`connect needs an http(s) URL, got ${JSON.stringify(shownUrl(url))}`);
  if (hasUserInfo(url))
    throw invalid(`connect takes no user or password in the URL (${shownUrl(url)}): the token is the credential, from --token-file or LIVE_MEM_TOKEN`);
  const token = globals.tokenFile !== undefined ? await secretFrom(globals.tokenFile, '--token-file') : (globals.token ?? env.LIVE_MEM_TOKEN);
  if (!token) throw invalid('connect needs a token: --token-file FILE, or LIVE_MEM_TOKEN (a token made by `live-mem token create` on the server)');
  const level = env.LIVE_MEM_LOG_LEVEL ?? 'info';
  const logger = createLogger(LEVELS.includes(level) ? (level as LogLevel) : 'info');
  for (const warning of await remoteWarnings(url, globals.tokenFile)) logger.warn(`live-mem connect: ${warning}`);
  const { relayStdio } = await import('../../mcp/relay.js');
  await relayStdio({ url, token, logger });
}

export const connectCommand: CommandDef = {
  name: 'connect <url>',
  description: 'serve MCP on stdio by relaying it to a live-mem server over HTTP, for clients that only launch processes (setup claude-desktop --url)',
  direct: (globals, url: string) => connect(url, globals),
};
