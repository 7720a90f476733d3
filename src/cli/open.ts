import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/settings.js';
import { hashToken } from '../core/auth/token-store.js';
import type { Caller } from '../core/caller.js';
import { createCore, type Core } from '../core/core.js';
import { deferredLlm } from '../llm/deferred.js';
import type { EmbeddingsClient } from '../llm/embeddings.js';
import type { LlmClient } from '../llm/types.js';
import { invalid } from '../shared/errors.js';
import { createLogger, type Logger } from '../shared/log.js';
import { createDriver } from '../storage/create-driver.js';
import { createProgressLine, type ProgressLine, type ProgressStream } from './progress.js';
import { VERSION } from './version.js';

/** Global flags every command accepts. */
export interface GlobalOptions {
  config?: string;
  home?: string;
  storage?: string;
  agent?: string;
  json?: boolean;
  token?: string;
  /** A file holding the token (its first line): kept out of the process list, unlike --token. */
  tokenFile?: string;
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

/**
 * The composition root: settings → driver → core → caller. Logs, warnings and the progress line go to
 * `stderr`: the process's, except for a test that runs the server in process and reads what it logged.
 */
export async function openCore(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env, stderr: ProgressStream = process.stderr): Promise<Opened> {
  const { token, warnings } = await tokenOfFlags(options);
  const settings = loadSettings({
    env,
    ...(options.config ? { configFile: options.config } : {}),
    flags: { home: options.home, storage: options.storage, agent: options.agent, token, tools: options.tools },
  });
  const progress = createProgressLine(stderr, { enabled: !options.quiet && stderr.isTTY === true });
  for (const warning of warnings) progress.log(`live-mem: warning: ${warning}\n`);
  const logger = createLogger(settings.logLevel, (line) => progress.log(line));
  const storage = await createDriver({ ...settings, fault: killHook(env) });
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
      bankFileMaxBytes: settings.bankFileMaxBytes,
      llmDailyTokens: settings.llmDailyTokens,
      llmSearchShare: settings.llmSearchShare,
    },
    ...(llm ? { llm } : {}),
    ...(embeddings ? { embeddings } : {}),
    embeddingsWeight: settings.embeddings.weight,
    consolidation: {
      timeoutMs: settings.consolidationTimeoutS * 1000,
      maxNotes: settings.consolidationMaxNotes,
      synthesisMaxWords: settings.synthesisMaxWords,
      leaseTtlMs: settings.consolidationLeaseS * 1000,
      claimTtlMs: settings.consolidationClaimS * 1000,
      maxNewFiles: settings.consolidationMaxNewFiles,
      maxBankFiles: settings.bankMaxFiles,
    },
    budgets: { fileTokens: settings.bankFileBudgetTokens, bankTokens: settings.bankBudgetTokens },
    summaries: { auto: settings.summaries === 'auto', windowChars: settings.summaryWindowChars, groupChars: settings.summaryGroupChars },
    compaction: { auto: settings.compaction === 'auto' },
    autoCreateSpaces: settings.autoCreateSpaces,
    redact: settings.redact,
    retention: settings.retention,
    fault: faultHook(env),
    version: VERSION,
    indexMemoryBytes: settings.indexMemoryMb * 1024 * 1024,
    ...(settings.watchIntervalMs === undefined ? {} : { watchIntervalMs: settings.watchIntervalMs }),
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

/**
 * The token given by a flag. `--token <secret>` works but is warned about: every local user reads a
 * process's arguments with `ps`, while its environment (LIVE_MEM_TOKEN) and a 0600 file are theirs
 * alone. `--token-file` reads the file's content, trimmed (the newline `echo` leaves).
 */
async function tokenOfFlags(options: GlobalOptions): Promise<{ token: string | undefined; warnings: string[] }> {
  if (options.tokenFile === undefined) {
    const warnings = options.token === undefined ? [] : ['--token puts the secret in the process list (ps): use LIVE_MEM_TOKEN or --token-file'];
    return { token: options.token, warnings };
  }
  if (options.token !== undefined) throw invalid('give --token or --token-file, not both');
  const file = options.tokenFile;
  let token: string;
  let mode: number;
  try {
    [token, mode] = await Promise.all([readFile(file, 'utf8').then((text) => text.trim()), stat(file).then((info) => info.mode)]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw invalid(`--token-file ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message}`);
  }
  if (token === '') throw invalid(`--token-file ${file} is empty`);
  const shared = process.platform !== 'win32' && (mode & 0o044) !== 0;
  const warnings = shared ? [`--token-file ${file} is readable by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 ${file}`] : [];
  return { token, warnings };
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
 * The embeddings of the settings, if any — an endpoint, or a model run in this process — imported on
 * the first call like the LLM's SDK (the local model's library is an optional peer dependency).
 */
function configuredEmbeddings(settings: Settings): EmbeddingsClient | undefined {
  const { baseUrl, model, apiKey = '', local, localDir, localDtype } = settings.embeddings;
  if (local) {
    const options = { model: local, dtype: localDtype, ...(localDir ? { dir: localDir } : { cacheDir: path.join(settings.home, 'models') }) };
    return deferredEmbeddings(`${local} (local, ${localDtype})`, async () => (await import('../llm/local-embeddings.js')).createLocalEmbeddings(options), {
      local: true,
      batchSize: LOCAL_EMBED_BATCH,
    });
  }
  if (!baseUrl || !model) return undefined;
  return deferredEmbeddings(`${model} @ ${baseUrl}`, async () => (await import('../llm/embeddings.js')).createOpenAiEmbeddings({ baseUrl, apiKey, model }));
}

/** Texts per call and per forward pass of a local model (local-embeddings.ts). */
const LOCAL_EMBED_BATCH = 8;

/** A client that creates the real one on its first call; what the indexer reads before (label, batch size, local) is given here. */
function deferredEmbeddings(label: string, create: () => Promise<EmbeddingsClient>, traits: { local?: boolean; batchSize?: number } = {}): EmbeddingsClient {
  let loaded: Promise<EmbeddingsClient> | undefined;
  const client = () => (loaded ??= create());
  return {
    label,
    ...traits,
    async embed(texts, signal, report) {
      return (await client()).embed(texts, signal, report);
    },
    async ping(signal) {
      await (await client()).ping?.(signal);
    },
  };
}

/**
 * Test hook: LIVE_MEM_TEST_KILL_AT=<point> kills this process with SIGKILL when a consolidation
 * or a compaction reaches that point of its commit (before-commit, after-commit, after-bank-writes, after-meta,
 * after-history, after-live-delete; a compaction has no after-meta nor after-live-delete), or a summaries run that point (summary-written-{n} after its
 * n-th write, summaries-before-delete), or the fs driver a replacing write's (before-rename:{file name}, its temp file
 * written whole), so tests can prove a crash there loses and doubles nothing.
 */
function killHook(env: NodeJS.ProcessEnv): (point: string) => void {
  const killAt = env.LIVE_MEM_TEST_KILL_AT;
  return (point) => {
    if (point === killAt) process.kill(process.pid, 'SIGKILL');
  };
}

function faultHook(env: NodeJS.ProcessEnv): (point: string) => Promise<void> {
  const kill = killHook(env);
  return async (point) => kill(point);
}
