import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/settings.js';
import { ownerCaller, type Caller } from '../core/caller.js';
import { createCore, type Core } from '../core/core.js';
import { createLogger, type Logger } from '../shared/log.js';
import { createDriver } from '../storage/create-driver.js';

/** Global flags every command accepts. */
export interface GlobalOptions {
  config?: string;
  home?: string;
  storage?: string;
  agent?: string;
  json?: boolean;
}

export interface Opened {
  settings: Settings;
  core: Core;
  caller: Caller;
  logger: Logger;
  close(): Promise<void>;
}

/** The composition root: settings → driver → core → caller. */
export async function openCore(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Opened> {
  const settings = loadSettings({
    env,
    ...(options.config ? { configFile: options.config } : {}),
    flags: { home: options.home, storage: options.storage, agent: options.agent },
  });
  const logger = createLogger(settings.logLevel);
  const storage = await createDriver(settings);
  const core = createCore({
    storage,
    logger,
    limits: { maxNoteChars: settings.maxNoteChars, bankReadAllMaxBytes: settings.bankReadAllMaxBytes },
  });
  return { settings, core, caller: ownerCaller(settings.agent), logger, close: async () => storage.close?.() };
}
