import { homedir, userInfo } from 'node:os';
import path from 'node:path';
import { LiveMemError } from '../shared/errors.js';
import type { LogLevel } from '../shared/log.js';
import { didYouMean } from '../shared/suggest.js';
import { FIELDS } from './fields.js';

/**
 * Every setting live-mem reads, resolved: what each is (fields.ts, the table), read from the
 * defaults < config file < environment < flags. `resolveSettings` is pure (no I/O); `load.ts`
 * gathers its inputs.
 */
export interface S3Settings {
  endpoint?: string;
  bucket?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  prefix?: string;
  forcePathStyle?: boolean;
  /** Milliseconds an S3 request may wait without a byte before it fails (not retried). */
  timeoutMs?: number;
}

/** What `serve --http` and `ui` let their clients hold (docs/security.md). */
export interface HttpSettings {
  maxConnections: number;
  /** Calls in flight at once per token (per address without one). */
  maxInFlight: number;
  /** Calls a minute per token (per address without one); 0 = no rate limit. */
  ratePerMinute: number;
  /** Failed authentications a minute per address; 0 = no limit. */
  authFailuresPerMinute: number;
  /** Host names (or `name:port`, or `*`) accepted besides the bind address (http/listen.ts `hostPolicy`). */
  allowedHosts: string[];
  /** Honour X-Forwarded-Host/-For from a reverse proxy in front. */
  trustProxy: boolean;
}

export interface LlmSettings {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  temperature: number;
  maxTokens: number;
  contextWindow: number;
}

/** An OpenAI-compatible embeddings endpoint for semantic recall; unset, recall is lexical only. */
export interface EmbeddingsSettings {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /** The cosine ranking's share of a hybrid recall score (core/recall/fusion.ts). */
  weight: number;
  /** A model run in this process instead of an endpoint (llm/local-embeddings.ts): its hub id, its folder, its weights' type. */
  local?: string;
  localDir?: string;
  localDtype: string;
}

export interface Settings {
  home: string;
  storage: 'fs' | 's3' | 'memory';
  s3: S3Settings;
  agent: string;
  logLevel: LogLevel;
  maxNoteChars: number;
  bankReadAllMaxBytes: number;
  exportMaxBytes: number;
  importMaxEntryBytes: number;
  importMaxBytes: number;
  bankFileMaxBytes: number;
  http: HttpSettings;
  llm: LlmSettings;
  embeddings: EmbeddingsSettings;
  consolidationTimeoutS: number;
  consolidationMaxNotes: number;
  synthesisMaxWords: number;
  consolidationLeaseS: number;
  consolidationClaimS: number;
  consolidationMaxNewFiles: number;
  bankMaxFiles: number;
  bankFileBudgetTokens: number;
  bankBudgetTokens: number;
  /** Model tokens a space may spend per UTC day; 0 = no cap. */
  llmDailyTokens: number;
  /** The percentage of a space's daily cap that the query embeddings of searches may use. */
  llmSearchShare: number;
  /** `auto`: update a space's summaries in the background after each consolidation (with a configured model). */
  summaries: 'auto' | 'off';
  /** `auto`: compact bank files a consolidation left over their budget, in the background (with a configured model). */
  compaction: 'auto' | 'off';
  /** What a consolidation does with a note it says it kept whose facts the bank lacks, and a compaction with a digest that drops its section's (core/retention). */
  retention: 'report' | 'retry' | 'refuse';
  summaryWindowChars: number;
  summaryGroupChars: number;
  /** Megabytes the search indexes of all spaces may hold in one process before the least recently used are evicted. */
  indexMemoryMb: number;
  /** Milliseconds between two checks of a watched space for changes (unset: the driver's default, core/feed/change-feed.ts). */
  watchIntervalMs?: number;
  /** The caller's token (LIVE_MEM_TOKEN / --token); never logged. */
  token?: string;
  /** 'required': without a token only the public tools answer; 'optional': no token = the local owner. */
  auth: 'optional' | 'required';
  /** A bootstrap admin secret (at least 32 characters); never logged. */
  adminToken?: string;
  /**
   * The tools served over MCP: a profile (agent, standard, all, admin) or tool names, comma-separated;
   * checked against the tools when serving (mcp/profiles.ts). Unset: `all` on stdio, `agent` listed
   * over HTTP (cli/commands/serve.ts).
   */
  tools?: string;
  /** The space a tool uses when its space_id is left empty; unset = the project of the client's roots or the working folder (mcp/default-space.ts). */
  space?: string;
  /** Whether a note to a missing space creates it: `auto` = for the local owner only (no token, auth not required). */
  autoCreateSpaces: 'on' | 'off' | 'auto';
  /** Secrets in notes and imports: masked, refused, or stored as given (core/redact/redact.ts). */
  redact: 'mask' | 'refuse' | 'off';
  /** Where the settings file was read from, if any (for messages). */
  configFile?: string;
}

export interface SettingsInputs {
  /** The parsed config file (snake_case keys, `s3:` section), if one was read. */
  file?: Record<string, unknown>;
  configFile?: string;
  env: Record<string, string | undefined>;
  /** Flags, by field key ('home', 'storage', 'agent', …), already strings. */
  flags?: Record<string, string | undefined>;
}

/**
 * Refuses a config file key no setting reads (`agnet: x` would otherwise be ignored, and the
 * setting silently left at its default), naming the nearest valid key.
 */
function checkFileKeys(file: Record<string, unknown>, configFile: string | undefined): void {
  const known = FIELDS.map((field) => field.file);
  const sections = new Set(known.filter((key) => key.includes('.')).map((key) => key.split('.')[0] as string));
  const keys = Object.entries(file).flatMap(([key, value]) =>
    sections.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).map((sub) => `${key}.${sub}`) : [key],
  );
  for (const key of keys) {
    if (!known.includes(key)) {
      throw new LiveMemError('config_error', `unknown setting '${key}' in ${configFile ?? 'the config file'}${didYouMean(key, known)}`, { setting: key });
    }
  }
}

export function resolveSettings(inputs: SettingsInputs): Settings {
  if (inputs.file) checkFileKeys(inputs.file, inputs.configFile);
  const values = new Map<string, unknown>();
  for (const field of FIELDS) {
    const fromFile = fileValue(readPath(inputs.file, field.file), inputs.env);
    if (fromFile !== undefined && fromFile !== null)
      values.set(field.key, field.parse(String(fromFile), `${field.file} in ${inputs.configFile ?? 'the config file'}`));
    for (const name of [...(field.aliases ?? []), field.env]) {
      const fromEnv = inputs.env[name];
      if (fromEnv !== undefined && fromEnv !== '') values.set(field.key, field.parse(fromEnv, name));
    }
    const fromFlag = inputs.flags?.[field.key];
    if (fromFlag !== undefined) values.set(field.key, field.parse(fromFlag, `--${field.key}`));
  }
  const get = <T>(key: string, fallback: T): T => (values.has(key) ? (values.get(key) as T) : fallback);
  const s3: S3Settings = {};
  for (const name of ['endpoint', 'bucket', 'region', 'accessKeyId', 'secretAccessKey', 'prefix', 'forcePathStyle', 'timeoutMs'] as const) {
    if (values.has(`s3.${name}`)) Object.assign(s3, { [name]: values.get(`s3.${name}`) });
  }
  const settings: Settings = {
    home: path.resolve(expandHome(get('home', path.join(homedir(), '.live-mem')))),
    storage: get('storage', 'fs'),
    s3,
    agent: get('agent', defaultAgent()),
    logLevel: get('logLevel', 'info'),
    maxNoteChars: get('maxNoteChars', 100_000),
    bankReadAllMaxBytes: get('bankReadAllMaxBytes', 1_000_000),
    exportMaxBytes: get('exportMaxBytes', 20_000_000),
    importMaxEntryBytes: get('importMaxEntryBytes', 256_000_000),
    importMaxBytes: get('importMaxBytes', 4_000_000_000),
    bankFileMaxBytes: get('bankFileMaxBytes', 1_048_576),
    http: {
      maxConnections: get('http.maxConnections', 256),
      maxInFlight: get('http.maxInFlight', 8),
      ratePerMinute: get('http.ratePerMinute', 600),
      authFailuresPerMinute: get('http.authFailuresPerMinute', 20),
      allowedHosts: get('http.allowedHosts', []),
      trustProxy: get('http.trustProxy', false),
    },
    llm: {
      ...(values.has('llm.baseUrl') ? { baseUrl: values.get('llm.baseUrl') as string } : {}),
      ...(values.has('llm.apiKey') ? { apiKey: values.get('llm.apiKey') as string } : {}),
      ...(values.has('llm.model') ? { model: values.get('llm.model') as string } : {}),
      temperature: get('llm.temperature', 0.3),
      maxTokens: get('llm.maxTokens', 8_192),
      contextWindow: get('llm.contextWindow', 32_768),
    },
    embeddings: {
      ...(values.has('embeddings.baseUrl') ? { baseUrl: values.get('embeddings.baseUrl') as string } : {}),
      ...(values.has('embeddings.apiKey') ? { apiKey: values.get('embeddings.apiKey') as string } : {}),
      ...(values.has('embeddings.model') ? { model: values.get('embeddings.model') as string } : {}),
      weight: get('embeddings.weight', 0.2), // core/context.ts DEFAULT_EMBEDDINGS_WEIGHT (config imports no core)
      ...(values.has('embeddings.local') ? { local: values.get('embeddings.local') as string } : {}),
      ...(values.has('embeddings.localDir') ? { localDir: path.resolve(expandHome(values.get('embeddings.localDir') as string)) } : {}),
      localDtype: get('embeddings.localDtype', 'q8'),
    },
    consolidationTimeoutS: get('consolidationTimeoutS', 600),
    consolidationMaxNotes: get('consolidationMaxNotes', 500),
    synthesisMaxWords: get('synthesisMaxWords', 600),
    consolidationLeaseS: get('consolidationLeaseS', 60),
    consolidationClaimS: get('consolidationClaimS', 900),
    consolidationMaxNewFiles: get('consolidationMaxNewFiles', 20),
    bankMaxFiles: get('bankMaxFiles', 200),
    bankFileBudgetTokens: get('bankFileBudgetTokens', 4_000),
    bankBudgetTokens: get('bankBudgetTokens', 16_000),
    llmDailyTokens: get('llmDailyTokens', 0),
    llmSearchShare: get('llmSearchShare', 10),
    summaries: get('summaries', 'auto'),
    compaction: get('compaction', 'auto'),
    retention: get('retention', 'retry'),
    summaryWindowChars: get('summaryWindowChars', 6_000),
    summaryGroupChars: get('summaryGroupChars', 10_000),
    indexMemoryMb: get('indexMemoryMb', 512),
    ...(values.has('watchIntervalMs') ? { watchIntervalMs: values.get('watchIntervalMs') as number } : {}),
    ...(values.has('token') ? { token: values.get('token') as string } : {}),
    auth: get('auth', 'optional'),
    ...(values.has('tools') ? { tools: values.get('tools') as string } : {}),
    ...(values.has('space') ? { space: values.get('space') as string } : {}),
    autoCreateSpaces: get('autoCreateSpaces', 'auto'),
    redact: get('redact', 'mask'),
    ...(values.has('adminToken') ? { adminToken: values.get('adminToken') as string } : {}),
    ...(inputs.configFile ? { configFile: inputs.configFile } : {}),
  };
  if (settings.adminToken !== undefined && settings.adminToken.length < 32) {
    throw new LiveMemError(
      'config_error',
      `LIVE_MEM_ADMIN_TOKEN is too weak (${settings.adminToken.length} characters): use at least 32 random characters, e.g. \`openssl rand -base64 32\``,
    );
  }
  if (settings.llm.baseUrl && !settings.llm.model) {
    throw new LiveMemError('config_error', 'LIVE_MEM_LLM_BASE_URL is set but LIVE_MEM_LLM_MODEL is not: name the model to use');
  }
  if (settings.embeddings.baseUrl && !settings.embeddings.model) {
    throw new LiveMemError(
      'config_error',
      'LIVE_MEM_EMBEDDINGS_BASE_URL is set but LIVE_MEM_EMBEDDINGS_MODEL is not: name the embedding model to use (e.g. nomic-embed-text on Ollama)',
    );
  }
  if (settings.embeddings.baseUrl && settings.embeddings.local) {
    throw new LiveMemError(
      'config_error',
      'LIVE_MEM_EMBEDDINGS_BASE_URL and LIVE_MEM_EMBEDDINGS_LOCAL are both set: use an endpoint or a model run in this process, not both',
    );
  }
  if (settings.llm.maxTokens >= settings.llm.contextWindow) {
    throw new LiveMemError(
      'config_error',
      `LIVE_MEM_LLM_MAX_TOKENS (${settings.llm.maxTokens}) must be smaller than LIVE_MEM_LLM_CONTEXT_WINDOW (${settings.llm.contextWindow})`,
    );
  }
  if (settings.storage === 's3' && !settings.s3.bucket) {
    throw new LiveMemError('config_error', 'the s3 storage needs a bucket: set LIVE_MEM_S3_BUCKET (or s3.bucket in live-mem.yaml)');
  }
  return settings;
}

/**
 * A file value written `${NAME}` is the environment variable NAME: a settings file shared by every
 * client can name a secret without holding it (`api_key: ${OPENAI_API_KEY}`). Only a whole value is
 * a reference, so no key or password that merely contains `${` changes meaning. An unset or empty
 * variable leaves the setting unset, as an empty LIVE_MEM_* variable does: a process started without
 * it (a desktop client does not read the shell's profile) still serves notes, and `doctor` reports
 * the model that refuses it.
 */
export const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function fileValue(value: unknown, env: Record<string, string | undefined>): unknown {
  const name = typeof value === 'string' ? ENV_REFERENCE.exec(value)?.[1] : undefined;
  if (name === undefined) return value;
  const resolved = env[name];
  return resolved === undefined || resolved === '' ? undefined : resolved;
}

function readPath(object: Record<string, unknown> | undefined, dotted: string): unknown {
  let value: unknown = object;
  for (const part of dotted.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function expandHome(value: string): string {
  return value === '~' || value.startsWith('~/') ? path.join(homedir(), value.slice(1)) : value;
}

function defaultAgent(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}
