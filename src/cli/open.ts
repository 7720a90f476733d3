import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/settings.js';
import { ownerCaller, type Caller } from '../core/caller.js';
import { createCore, type Core } from '../core/core.js';
import { deferredLlm } from '../llm/deferred.js';
import type { LlmClient } from '../llm/types.js';
import { createLogger, type Logger } from '../shared/log.js';
import { createDriver } from '../storage/create-driver.js';
import { VERSION } from './version.js';

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
  const llm = configuredLlm(settings);
  const core = createCore({
    storage,
    logger,
    limits: { maxNoteChars: settings.maxNoteChars, bankReadAllMaxBytes: settings.bankReadAllMaxBytes, exportMaxBytes: settings.exportMaxBytes },
    ...(llm ? { llm } : {}),
    consolidation: {
      timeoutMs: settings.consolidationTimeoutS * 1000,
      maxNotes: settings.consolidationMaxNotes,
      synthesisMaxWords: settings.synthesisMaxWords,
      leaseTtlMs: settings.consolidationLeaseS * 1000,
    },
    fault: faultHook(env),
    version: VERSION,
  });
  return { settings, core, caller: ownerCaller(settings.agent), logger, close: async () => storage.close?.() };
}

/** The OpenAI-compatible endpoint of the settings, if any; its SDK is imported on the first call. */
function configuredLlm(settings: Settings): LlmClient | undefined {
  const { baseUrl, model, apiKey = '', temperature, maxTokens, contextWindow } = settings.llm;
  if (!baseUrl || !model) return undefined;
  return deferredLlm({ label: `${model} @ ${baseUrl}`, contextWindow, maxOutputTokens: maxTokens }, async () =>
    (await import('../llm/openai.js')).createOpenAiLlm({ baseUrl, apiKey, model, temperature, maxTokens, contextWindow }),
  );
}

/**
 * Test hook: LIVE_MEM_TEST_KILL_AT=<point> kills this process with SIGKILL when a consolidation
 * reaches that point of its commit (before-commit, after-commit, after-bank-writes, after-meta,
 * after-history, after-live-delete), so tests can prove a crash there loses and doubles nothing.
 */
function faultHook(env: NodeJS.ProcessEnv): (point: string) => Promise<void> {
  const killAt = env.LIVE_MEM_TEST_KILL_AT;
  return async (point) => {
    if (point === killAt) process.kill(process.pid, 'SIGKILL');
  };
}
