import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/settings.js';
import { hashToken } from '../core/auth/token-store.js';
import type { Caller } from '../core/caller.js';
import { createCore, type Core } from '../core/core.js';
import { deferredLlm } from '../llm/deferred.js';
import type { EmbeddingsClient } from '../llm/embeddings.js';
import type { LlmClient } from '../llm/types.js';
import { createLogger, type Logger } from '../shared/log.js';
import { createDriver } from '../storage/create-driver.js';
import { createProgressLine, type ProgressLine } from './progress.js';
import { VERSION } from './version.js';

/** Global flags every command accepts. */
export interface GlobalOptions {
  config?: string;
  home?: string;
  storage?: string;
  agent?: string;
  json?: boolean;
  token?: string;
  /** The tools served over MCP: a profile or tool names. */
  tools?: string;
  /** No progress display. */
  quiet?: boolean;
}

export interface Opened {
  settings: Settings;
  core: Core;
  logger: Logger;
  /** The progress line on stderr (drawn only on a terminal, and not with --quiet); log lines go through it. */
  progress: ProgressLine;
  /** The caller of this process's settings, checked anew at each call (revocation, expiry). */
  resolveCaller(): Promise<Caller>;
  close(): Promise<void>;
}

/** What a command runs with: the opened core and its caller, resolved once for the command. */
export interface Session extends Opened {
  caller: Caller;
}

/** The composition root: settings → driver → core → caller. */
export async function openCore(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Opened> {
  const settings = loadSettings({
    env,
    ...(options.config ? { configFile: options.config } : {}),
    flags: { home: options.home, storage: options.storage, agent: options.agent, token: options.token, tools: options.tools },
  });
  const progress = createProgressLine(process.stderr, { enabled: !options.quiet && process.stderr.isTTY === true });
  const logger = createLogger(settings.logLevel, (line) => progress.log(line));
  const storage = await createDriver(settings);
  const llm = configuredLlm(settings);
  const embeddings = configuredEmbeddings(settings);
  const core = createCore({
    storage,
    logger,
    limits: {
      maxNoteChars: settings.maxNoteChars,
      bankReadAllMaxBytes: settings.bankReadAllMaxBytes,
      exportMaxBytes: settings.exportMaxBytes,
      importMaxEntryBytes: settings.importMaxEntryBytes,
      importMaxBytes: settings.importMaxBytes,
    },
    ...(llm ? { llm } : {}),
    ...(embeddings ? { embeddings } : {}),
    consolidation: {
      timeoutMs: settings.consolidationTimeoutS * 1000,
      maxNotes: settings.consolidationMaxNotes,
      synthesisMaxWords: settings.synthesisMaxWords,
      leaseTtlMs: settings.consolidationLeaseS * 1000,
      maxNewFiles: settings.consolidationMaxNewFiles,
      maxBankFiles: settings.bankMaxFiles,
    },
    summaries: { auto: settings.summaries === 'auto', windowChars: settings.summaryWindowChars, groupChars: settings.summaryGroupChars },
    fault: faultHook(env),
    version: VERSION,
    auth: {
      required: settings.auth === 'required',
      ownerAgent: settings.agent,
      ...(settings.adminToken ? { adminTokenHash: hashToken(settings.adminToken) } : {}),
    },
  });
  const close = async () => {
    progress.clear();
    await core.idle(); // an index snapshot being written is finished, not cut
    await storage.close?.();
  };
  return { settings, core, logger, progress, resolveCaller: () => core.auth.resolve(settings.token), close };
}

/** The OpenAI-compatible endpoint of the settings, if any; its SDK is imported on the first call. */
function configuredLlm(settings: Settings): LlmClient | undefined {
  const { baseUrl, model, apiKey = '', temperature, maxTokens, contextWindow } = settings.llm;
  if (!baseUrl || !model) return undefined;
  return deferredLlm({ label: `${model} @ ${baseUrl}`, contextWindow, maxOutputTokens: maxTokens }, async () =>
    (await import('../llm/openai.js')).createOpenAiLlm({ baseUrl, apiKey, model, temperature, maxTokens, contextWindow }),
  );
}

/** The embeddings endpoint of the settings, if any; like the LLM's, its SDK is imported on the first call. */
function configuredEmbeddings(settings: Settings): EmbeddingsClient | undefined {
  const { baseUrl, model, apiKey = '' } = settings.embeddings;
  if (!baseUrl || !model) return undefined;
  let loaded: Promise<EmbeddingsClient> | undefined;
  return {
    label: `${model} @ ${baseUrl}`,
    async embed(texts, signal) {
      loaded ??= import('../llm/embeddings.js').then((module) => module.createOpenAiEmbeddings({ baseUrl, apiKey, model }));
      return (await loaded).embed(texts, signal);
    },
    async ping(signal) {
      loaded ??= import('../llm/embeddings.js').then((module) => module.createOpenAiEmbeddings({ baseUrl, apiKey, model }));
      await (await loaded).ping?.(signal);
    },
  };
}

/**
 * Test hook: LIVE_MEM_TEST_KILL_AT=<point> kills this process with SIGKILL when a consolidation
 * reaches that point of its commit (before-commit, after-commit, after-bank-writes, after-meta,
 * after-history, after-live-delete), or a summaries run that point (summary-written-{n} after its
 * n-th write, summaries-before-delete), so tests can prove a crash there loses and doubles nothing.
 */
function faultHook(env: NodeJS.ProcessEnv): (point: string) => Promise<void> {
  const killAt = env.LIVE_MEM_TEST_KILL_AT;
  return async (point) => {
    if (point === killAt) process.kill(process.pid, 'SIGKILL');
  };
}
