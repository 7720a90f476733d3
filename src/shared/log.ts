/**
 * Logging goes to stderr, always: in server mode stdout carries JSON-RPC and nothing else.
 * LIVE_MEM_LOG_LEVEL=debug|info|warn|error|silent (default info).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const threshold = ORDER[level] ?? ORDER.info;
  const emit = (lvl: Exclude<LogLevel, 'silent'>) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    const suffix = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    write(`[live-mem] ${lvl}: ${message}${suffix}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = createLogger('silent');
