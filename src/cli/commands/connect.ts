import type { LogLevel } from '../../shared/log.js';
import { createLogger } from '../../shared/log.js';
import { invalid } from '../../shared/errors.js';
import type { CommandDef } from '../command.js';
import type { GlobalOptions } from '../open.js';
import { secretFrom } from './setup-files.js';

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'silent'];

/**
 * `live-mem connect <url>`: serves MCP on stdio by relaying it to a live-mem server over HTTP, for
 * a client that can only launch a process (what `setup claude-desktop --url` writes). It opens no
 * store and reads no settings file: the server has them. The token comes from --token-file (the
 * secret stays in that file), else LIVE_MEM_TOKEN. stdout is the protocol: nothing else is written there.
 */
export async function connect(raw: string, globals: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`connect needs the server's http(s) URL (https://memory.example.com/mcp), got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`connect needs an http(s) URL, got ${JSON.stringify(raw)}`);
  const token = globals.tokenFile !== undefined ? await secretFrom(globals.tokenFile, '--token-file') : (globals.token ?? env.LIVE_MEM_TOKEN);
  if (!token) throw invalid('connect needs a token: --token-file FILE, or LIVE_MEM_TOKEN (a token made by `live-mem token create` on the server)');
  const level = env.LIVE_MEM_LOG_LEVEL ?? 'info';
  const logger = createLogger(LEVELS.includes(level) ? (level as LogLevel) : 'info');
  const { relayStdio } = await import('../../mcp/relay.js');
  await relayStdio({ url, token, logger });
}

export const connectCommand: CommandDef = {
  name: 'connect <url>',
  description: 'serve MCP on stdio by relaying it to a live-mem server over HTTP, for clients that only launch processes (setup claude-desktop --url)',
  direct: (globals, url: string) => connect(url, globals),
};
