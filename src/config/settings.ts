import { homedir, userInfo } from 'node:os';
import path from 'node:path';
import { LiveMemError } from '../shared/errors.js';
import type { LogLevel } from '../shared/log.js';
import { didYouMean } from '../shared/suggest.js';

/**
 * Every setting live-mem reads, in one place. Precedence: defaults < config file < environment <
 * flags. `resolveSettings` is pure (no I/O); `load.ts` gathers its inputs.
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
  /** Host names (or `name:port`, or `*`) accepted besides the bind address (mcp/http-listen.ts `hostPolicy`). */
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
  http: HttpSettings;
  llm: LlmSettings;
  embeddings: EmbeddingsSettings;
  consolidationTimeoutS: number;
  consolidationMaxNotes: number;
  synthesisMaxWords: number;
  consolidationLeaseS: number;
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
  /** The caller's token (LIVE_MEM_TOKEN / --token); never logged. */
  token?: string;
  /** 'required': without a token only the public tools answer; 'optional': no token = the local owner. */
  auth: 'optional' | 'required';
  /** A bootstrap admin secret (at least 32 characters); never logged. */
  adminToken?: string;
  /**
   * The tools served over MCP: a profile (agent, standard, all, admin) or tool names, comma-separated;
   * checked against the tools when serving (mcp/profiles.ts).
   */
  tools: string;
  /** The space a tool uses when its space_id is left empty; unset = the project of the client's roots or the working folder (mcp/default-space.ts). */
  space?: string;
  /** Whether a note to a missing space creates it: `auto` = for the local owner only (no token, auth not required). */
  autoCreateSpaces: 'on' | 'off' | 'auto';
  /** Secrets in notes and imports: masked, refused, or stored as given (core/redact/redact.ts). */
  redact: 'mask' | 'refuse' | 'off';
  /** Where the settings file was read from, if any (for messages). */
  configFile?: string;
}

/** A setting: its env name, its aliases (the Python server's names), its config-file path and its parser. */
interface Field {
  key: string;
  env: string;
  aliases?: string[];
  file: string;
  parse: (raw: string, source: string) => unknown;
  description: string;
  defaultText: string;
}

const str = (raw: string) => raw;
const int = (min: number, max: number) => (raw: string, source: string) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LiveMemError('config_error', `${source} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
};
const num = (min: number, max: number) => (raw: string, source: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new LiveMemError('config_error', `${source} must be a number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
};
const url = (raw: string, source: string) => {
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new LiveMemError('config_error', `${source} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
};
const bool = (raw: string, source: string) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new LiveMemError('config_error', `${source} must be true or false, got ${JSON.stringify(raw)}`);
};
/** A profile or tool names: normalised to `a,b,c`; which names exist is checked when serving. */
const toolList = (raw: string, source: string) => {
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const bad = names.find((name) => !/^[a-z][a-z_]*$/.test(name));
  if (names.length === 0 || bad !== undefined) {
    throw new LiveMemError(
      'config_error',
      `${source} must be a profile (agent, standard, all, admin) or tool names, comma-separated, got ${JSON.stringify(raw)}`,
    );
  }
  return names.join(',');
};
/** Host names for LIVE_MEM_ALLOWED_HOSTS / --allowed-hosts: `name`, `name:port`, `[v6]:port` or `*`, comma-separated. */
export const hostList = (raw: string, source: string): string[] => {
  const hosts = raw
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  const bad = hosts.find((host) => host !== '*' && !/^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\])(:\d{1,5})?$/.test(host));
  if (hosts.length === 0 || bad !== undefined)
    throw new LiveMemError(
      'config_error',
      `${source} must be host names (memory.example.com), name:port or *, comma-separated, got ${JSON.stringify(bad ?? raw)}`,
    );
  return hosts;
};

/** A Hugging Face model id, `org/name` or `name`: it becomes a folder path, so no `..` and no leading `/`. */
const modelId = (raw: string, source: string) => {
  if (!/^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(raw) || raw.includes('..'))
    throw new LiveMemError('config_error', `${source} must be a model id such as Xenova/all-MiniLM-L6-v2, got ${JSON.stringify(raw)}`);
  return raw;
};

/** A space id, as the core accepts them (validate.ts). */
const spaceIdSetting = (raw: string, source: string) => {
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/.test(raw)) {
    throw new LiveMemError(
      'config_error',
      `${source} must be a space id (letters, digits, _ or -, up to 64, starting with a letter or digit), got ${JSON.stringify(raw)}`,
    );
  }
  return raw;
};
const oneOf =
  (...values: string[]) =>
  (raw: string, source: string) => {
    if (!values.includes(raw)) throw new LiveMemError('config_error', `${source} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw;
  };

export const FIELDS: Field[] = [
  {
    key: 'home',
    env: 'LIVE_MEM_HOME',
    file: 'home',
    parse: str,
    description: 'Root folder of the fs store, and where live-mem.yaml is looked for',
    defaultText: '~/.live-mem',
  },
  {
    key: 'storage',
    env: 'LIVE_MEM_STORAGE',
    file: 'storage',
    parse: oneOf('fs', 's3', 'memory'),
    description: 'Storage driver: fs, s3 (memory is for tests)',
    defaultText: 'fs',
  },
  {
    key: 'agent',
    env: 'LIVE_MEM_AGENT',
    file: 'agent',
    parse: str,
    description: 'Agent name written on notes (reduced to a filename-safe form)',
    defaultText: 'the OS user name',
  },
  {
    key: 'logLevel',
    env: 'LIVE_MEM_LOG_LEVEL',
    file: 'log_level',
    parse: oneOf('debug', 'info', 'warn', 'error', 'silent'),
    description: 'Logging to stderr',
    defaultText: 'info',
  },
  {
    key: 'maxNoteChars',
    env: 'LIVE_MEM_MAX_NOTE_CHARS',
    file: 'max_note_chars',
    parse: int(1, 10_000_000),
    description: 'Largest note content accepted, in characters',
    defaultText: '100000',
  },
  {
    key: 'bankReadAllMaxBytes',
    env: 'LIVE_MEM_BANK_READ_ALL_MAX_BYTES',
    file: 'bank_read_all_max_bytes',
    parse: int(1_000, 100_000_000),
    description: 'bank_read_all stops past this many bytes and says it truncated',
    defaultText: '1000000',
  },
  {
    key: 'exportMaxBytes',
    env: 'LIVE_MEM_EXPORT_MAX_BYTES',
    file: 'export_max_bytes',
    parse: int(1_000, 2_000_000_000),
    description: 'space_export and backup_download answer in base64 up to this many archive bytes; larger spaces go through the CLI',
    defaultText: '20000000',
  },
  {
    key: 'importMaxEntryBytes',
    env: 'LIVE_MEM_IMPORT_MAX_ENTRY_BYTES',
    file: 'import_max_entry_bytes',
    parse: int(1_000, 2_000_000_000),
    description:
      "import refuses an archive holding a file larger than this, uncompressed (a file is held whole while it is checked; a consolidation's history can be tens of MB)",
    defaultText: '256000000',
  },
  {
    key: 'importMaxBytes',
    env: 'LIVE_MEM_IMPORT_MAX_BYTES',
    file: 'import_max_bytes',
    parse: int(1_000, 1_000_000_000_000_000),
    description: 'import refuses an archive holding more than this in all, uncompressed',
    defaultText: '4000000000',
  },
  {
    key: 'http.maxConnections',
    env: 'LIVE_MEM_HTTP_MAX_CONNECTIONS',
    file: 'http.max_connections',
    parse: int(1, 100_000),
    description:
      'HTTP (serve --http, ui): open connections at once; past it, an idle connection no token has used (the oldest of the address holding the most) is closed for a new one, never one a token has used',
    defaultText: '256',
  },
  {
    key: 'http.maxInFlight',
    env: 'LIVE_MEM_HTTP_MAX_IN_FLIGHT',
    file: 'http.max_in_flight',
    parse: int(1, 10_000),
    description: 'HTTP: calls in flight at once per token (per address without one; each call of a batch counts); more get 429',
    defaultText: '8',
  },
  {
    key: 'http.ratePerMinute',
    env: 'LIVE_MEM_HTTP_RATE_LIMIT',
    file: 'http.rate_limit',
    parse: int(0, 1_000_000),
    description: 'HTTP: calls a minute per token (per address without one; each call of a batch counts), in bursts up to that many; more get 429; 0 = no limit',
    defaultText: '600',
  },
  {
    key: 'http.authFailuresPerMinute',
    env: 'LIVE_MEM_HTTP_AUTH_FAILURES',
    file: 'http.auth_failures',
    parse: int(0, 1_000_000),
    description:
      'HTTP: unknown, revoked or expired tokens a minute per address, in bursts up to that many; past it, the address gets 429 for tokens not yet authenticated by this server; 0 = no limit',
    defaultText: '20',
  },
  {
    key: 'http.allowedHosts',
    env: 'LIVE_MEM_ALLOWED_HOSTS',
    file: 'http.allowed_hosts',
    parse: hostList,
    description:
      'HTTP: Host names clients use (`memory.example.com`, `name:port`), comma-separated, besides the bind address; off loopback, unset = any (auth required); `*` = any',
    defaultText: '',
  },
  {
    key: 'http.trustProxy',
    env: 'LIVE_MEM_TRUST_PROXY',
    file: 'http.trust_proxy',
    parse: bool,
    description: 'HTTP: behind a reverse proxy, take X-Forwarded-Host for the Host check and X-Forwarded-For for per-address limits',
    defaultText: 'false',
  },
  {
    key: 'tools',
    env: 'LIVE_MEM_TOOLS',
    file: 'tools',
    parse: toolList,
    description: 'Tools offered over MCP: a profile (agent, standard, all, admin) or tool names, comma-separated',
    defaultText: 'all',
  },
  {
    key: 'space',
    env: 'LIVE_MEM_SPACE',
    file: 'space',
    parse: spaceIdSetting,
    description:
      "The default space pinned: the one a tool uses when its space_id is left empty (system_whoami names it). Unset: the project of the client's MCP roots, else of the folder the server starts in (not / nor the home folder), else a token's one space, else none; not used over HTTP",
    defaultText: 'the project',
  },
  {
    key: 'autoCreateSpaces',
    env: 'LIVE_MEM_AUTO_CREATE_SPACES',
    file: 'auto_create_spaces',
    parse: oneOf('auto', 'on', 'off'),
    description:
      '`on`: a live_note to a space that does not exist creates it (default rules) for any caller allowed to write there; `auto`: only for the local owner (no token, auth not required); `off`: never. Reads never create a space',
    defaultText: 'auto',
  },
  {
    key: 'redact',
    env: 'LIVE_MEM_REDACT',
    file: 'redact',
    parse: oneOf('mask', 'refuse', 'off'),
    description:
      'Secrets in any text a caller stores (a note and its tags, a description, rules, a reason, a correction, an ingest, every file of an import: cloud and API keys, tokens, private keys, JWTs, passwords in URLs, commands and `password=`-style assignments): `mask` replaces each with `[redacted: kind]` and the answer says what was masked; `refuse` stores nothing and names the kinds found; `off` stores them as given. `mask` and `refuse` also refuse a model text that would store a new secret (a plan, the synthesis compression, a summary, a compaction digest). Text between `<private>` and `</private>` is never stored, whatever this says',
    defaultText: 'mask',
  },
  {
    key: 'token',
    env: 'LIVE_MEM_TOKEN',
    file: 'token',
    parse: str,
    description: 'The token this process acts with (stdio and CLI); unset = the local owner, unless auth is required',
    defaultText: '',
  },
  {
    key: 'auth',
    env: 'LIVE_MEM_AUTH',
    file: 'auth',
    parse: oneOf('optional', 'required'),
    description: '`required`: no token, no access (only system_health, system_about, system_whoami answer)',
    defaultText: 'optional',
  },
  {
    key: 'adminToken',
    env: 'LIVE_MEM_ADMIN_TOKEN',
    file: 'admin_token',
    parse: str,
    description: 'A bootstrap admin secret (32+ characters) accepted as a token with every right, to create the first tokens',
    defaultText: '',
  },
  {
    key: 's3.endpoint',
    env: 'LIVE_MEM_S3_ENDPOINT',
    aliases: ['S3_ENDPOINT_URL'],
    file: 's3.endpoint',
    parse: str,
    description: 'S3 endpoint URL (unset: AWS)',
    defaultText: '(AWS)',
  },
  {
    key: 's3.bucket',
    env: 'LIVE_MEM_S3_BUCKET',
    aliases: ['S3_BUCKET_NAME'],
    file: 's3.bucket',
    parse: str,
    description: 'S3 bucket (required with s3)',
    defaultText: '',
  },
  {
    key: 's3.region',
    env: 'LIVE_MEM_S3_REGION',
    aliases: ['S3_REGION_NAME'],
    file: 's3.region',
    parse: str,
    description: 'S3 region',
    defaultText: 'us-east-1',
  },
  {
    key: 's3.accessKeyId',
    env: 'LIVE_MEM_S3_ACCESS_KEY_ID',
    aliases: ['S3_ACCESS_KEY_ID'],
    file: 's3.access_key_id',
    parse: str,
    description: 'S3 access key (unset: the AWS default credential chain)',
    defaultText: '',
  },
  {
    key: 's3.secretAccessKey',
    env: 'LIVE_MEM_S3_SECRET_ACCESS_KEY',
    aliases: ['S3_SECRET_ACCESS_KEY'],
    file: 's3.secret_access_key',
    parse: str,
    description: 'S3 secret key',
    defaultText: '',
  },
  {
    key: 's3.prefix',
    env: 'LIVE_MEM_S3_PREFIX',
    file: 's3.prefix',
    parse: str,
    description: 'Key prefix inside the bucket, to share one bucket between stores',
    defaultText: '',
  },
  {
    key: 'llm.baseUrl',
    env: 'LIVE_MEM_LLM_BASE_URL',
    aliases: ['LLMAAS_API_URL'],
    file: 'llm.base_url',
    parse: url,
    description: 'OpenAI-compatible endpoint for consolidation, including /v1 (unset: MCP sampling if the client offers it)',
    defaultText: '',
  },
  {
    key: 'llm.apiKey',
    env: 'LIVE_MEM_LLM_API_KEY',
    aliases: ['LLMAAS_API_KEY'],
    file: 'llm.api_key',
    parse: str,
    description: 'API key for the endpoint',
    defaultText: '',
  },
  {
    key: 'llm.model',
    env: 'LIVE_MEM_LLM_MODEL',
    aliases: ['LLMAAS_MODEL'],
    file: 'llm.model',
    parse: str,
    description: 'Model name (required with a base URL)',
    defaultText: '',
  },
  {
    key: 'llm.temperature',
    env: 'LIVE_MEM_LLM_TEMPERATURE',
    aliases: ['LLMAAS_TEMPERATURE'],
    file: 'llm.temperature',
    parse: num(0, 2),
    description: 'Sampling temperature',
    defaultText: '0.3',
  },
  {
    key: 'llm.maxTokens',
    env: 'LIVE_MEM_LLM_MAX_TOKENS',
    aliases: ['LLMAAS_MAX_TOKENS'],
    file: 'llm.max_tokens',
    parse: int(256, 1_000_000),
    description: 'Tokens reserved for each reply',
    defaultText: '8192',
  },
  {
    key: 'llm.contextWindow',
    env: 'LIVE_MEM_LLM_CONTEXT_WINDOW',
    file: 'llm.context_window',
    parse: int(2_048, 10_000_000),
    description: "The model's context window in tokens: large backlogs are cut into windows that fit",
    defaultText: '32768',
  },
  {
    key: 'embeddings.baseUrl',
    env: 'LIVE_MEM_EMBEDDINGS_BASE_URL',
    file: 'embeddings.base_url',
    parse: url,
    description: 'OpenAI-compatible embeddings endpoint for semantic recall, including /v1 (unset: lexical recall only)',
    defaultText: '',
  },
  {
    key: 'embeddings.apiKey',
    env: 'LIVE_MEM_EMBEDDINGS_API_KEY',
    file: 'embeddings.api_key',
    parse: str,
    description: 'API key for the embeddings endpoint',
    defaultText: '',
  },
  {
    key: 'embeddings.model',
    env: 'LIVE_MEM_EMBEDDINGS_MODEL',
    file: 'embeddings.model',
    parse: str,
    description: 'Embedding model name (required with an embeddings base URL)',
    defaultText: '',
  },
  {
    key: 'embeddings.local',
    env: 'LIVE_MEM_EMBEDDINGS_LOCAL',
    file: 'embeddings.local',
    parse: modelId,
    description:
      'An embedding model run in this process instead of an endpoint, by its Hugging Face id (e.g. `Xenova/all-MiniLM-L6-v2`); needs the optional `@huggingface/transformers` installed beside live-mem',
    defaultText: '',
  },
  {
    key: 'embeddings.localDir',
    env: 'LIVE_MEM_EMBEDDINGS_LOCAL_DIR',
    file: 'embeddings.local_dir',
    parse: str,
    description:
      'The folder holding local models (`<dir>/<model id>/` with `config.json`, `tokenizer.json`, `onnx/`): set, nothing is downloaded; unset, a model is downloaded once into `<home>/models`',
    defaultText: '',
  },
  {
    key: 'embeddings.localDtype',
    env: 'LIVE_MEM_EMBEDDINGS_LOCAL_DTYPE',
    file: 'embeddings.local_dtype',
    parse: oneOf('q8', 'fp32', 'fp16', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'),
    description: "The local model's weights: `q8` (int8, `onnx/model_quantized.onnx`), `fp32` (`onnx/model.onnx`), …",
    defaultText: 'q8',
  },
  {
    key: 'embeddings.weight',
    env: 'LIVE_MEM_EMBEDDINGS_WEIGHT',
    file: 'embeddings.weight',
    parse: num(0, 1),
    description: "The cosine ranking's share of a hybrid search score, the rest BM25's (0: BM25 alone; docs/recall.md)",
    defaultText: '0.2',
  },
  {
    key: 'consolidationTimeoutS',
    env: 'LIVE_MEM_CONSOLIDATION_TIMEOUT_S',
    aliases: ['CONSOLIDATION_TIMEOUT'],
    file: 'consolidation_timeout_s',
    parse: int(1, 86_400),
    description: 'Timeout of each LLM call, in seconds',
    defaultText: '600',
  },
  {
    key: 'consolidationMaxNotes',
    env: 'LIVE_MEM_CONSOLIDATION_MAX_NOTES',
    aliases: ['CONSOLIDATION_MAX_NOTES'],
    file: 'consolidation_max_notes',
    parse: int(1, 1_000_000),
    description: 'Most notes one consolidation takes (the oldest first)',
    defaultText: '500',
  },
  {
    key: 'consolidationLeaseS',
    env: 'LIVE_MEM_CONSOLIDATION_LEASE_S',
    file: 'consolidation_lease_s',
    parse: int(2, 3_600),
    description: "How long a crashed consolidation's lock blocks the next one; a live one renews it every third of that",
    defaultText: '60',
  },
  {
    key: 'consolidationMaxNewFiles',
    env: 'LIVE_MEM_CONSOLIDATION_MAX_NEW_FILES',
    file: 'consolidation_max_new_files',
    parse: int(1, 10_000),
    description: 'Most bank files one consolidation may create; a plan creating more is refused whole (the notes stay in live/)',
    defaultText: '20',
  },
  {
    key: 'bankMaxFiles',
    env: 'LIVE_MEM_BANK_MAX_FILES',
    file: 'bank_max_files',
    parse: int(1, 10_000),
    description: "Most files a space's bank may hold; a plan that would create more is refused whole",
    defaultText: '200',
  },
  {
    key: 'bankFileBudgetTokens',
    env: 'LIVE_MEM_BANK_FILE_BUDGET_TOKENS',
    file: 'bank_file_budget_tokens',
    parse: int(100, 1_000_000),
    description: "Size budget of one bank file, in tokens (about 3.5 characters each), unless the file's entry in the rules states its own",
    defaultText: '4000',
  },
  {
    key: 'bankBudgetTokens',
    env: 'LIVE_MEM_BANK_BUDGET_TOKENS',
    file: 'bank_budget_tokens',
    parse: int(100, 10_000_000),
    description: 'Size budget of the whole bank, in tokens, unless the rules state one ("Bank budget: N tokens")',
    defaultText: '16000',
  },
  {
    key: 'llmDailyTokens',
    env: 'LIVE_MEM_LLM_DAILY_TOKENS',
    file: 'llm_daily_tokens',
    parse: int(0, 1_000_000_000_000),
    description:
      "Model tokens (prompt + reply, every purpose) a space may spend per UTC day; a call that would pass it, with the calls in flight, is refused (`quota_exceeded`). 0 = no cap. `space_update` with `llm_daily_tokens` may set a space's own: a writer's only lowers it, an admin's replaces it (0 = no cap for that space)",
    defaultText: '0',
  },
  {
    key: 'llmSearchShare',
    env: 'LIVE_MEM_LLM_SEARCH_SHARE',
    file: 'llm_search_share',
    parse: int(0, 100),
    description:
      "Percent of a space's daily token cap that `memory_search` may spend embedding queries (readers' searches); past it, a search ranks by BM25 alone and says so (`fallback`), never refused. 0 = queries of a capped space are never embedded",
    defaultText: '10',
  },
  {
    key: 'compaction',
    env: 'LIVE_MEM_COMPACTION',
    file: 'compaction',
    parse: oneOf('auto', 'off'),
    description:
      '`auto`: after a consolidation that leaves a bank file over its budget, compact it in the background (needs a configured model); `off`: only on demand',
    defaultText: 'auto',
  },
  {
    key: 'retention',
    env: 'LIVE_MEM_RETENTION',
    file: 'retention',
    parse: oneOf('report', 'retry', 'refuse'),
    description:
      "What happens when a consolidation's plan says it kept a note whose facts (numbers, dates, versions, names, paths, identifiers, its rarest words) the new bank and synthesis do not hold, or a compaction digest drops what its section held while the file had room: `report` commits and records it; `retry` asks the model once more, naming the missing facts of each note, then commits and records what is still missing (a digest still dropping them is refused); `refuse` refuses the window (the digest). Always in the result, `history_read`, `bank_explain` and the viewer",
    defaultText: 'retry',
  },
  {
    key: 'synthesisMaxWords',
    env: 'LIVE_MEM_SYNTHESIS_MAX_WORDS',
    file: 'synthesis_max_words',
    parse: int(50, 1_000_000),
    description: 'Past this many words the synthesis is compressed by one more LLM call',
    defaultText: '600',
  },
  {
    key: 'summaries',
    env: 'LIVE_MEM_SUMMARIES',
    file: 'summaries',
    parse: oneOf('auto', 'off'),
    description: "`auto`: after each consolidation, update the space's summaries in the background (needs a configured model); `off`: only on demand",
    defaultText: 'auto',
  },
  {
    key: 'summaryWindowChars',
    env: 'LIVE_MEM_SUMMARY_WINDOW_CHARS',
    file: 'summary_window_chars',
    parse: int(500, 200_000),
    description: 'Default characters of notes per level-1 summary window',
    defaultText: '6000',
  },
  {
    key: 'summaryGroupChars',
    env: 'LIVE_MEM_SUMMARY_GROUP_CHARS',
    file: 'summary_group_chars',
    parse: int(500, 500_000),
    description: 'Default characters of summaries per higher-level group',
    defaultText: '10000',
  },
  {
    key: 'indexMemoryMb',
    env: 'LIVE_MEM_INDEX_MEMORY_MB',
    file: 'index_memory_mb',
    parse: int(16, 1_000_000),
    description:
      'Memory the search indexes of all spaces may hold in one process (estimated); past it the least recently searched are evicted, and reloaded from their snapshots when searched again',
    defaultText: '512',
  },
  {
    key: 's3.forcePathStyle',
    env: 'LIVE_MEM_S3_FORCE_PATH_STYLE',
    file: 's3.force_path_style',
    parse: bool,
    description: 'Path-style URLs (Ceph, MinIO); default true when an endpoint is set',
    defaultText: 'true with an endpoint',
  },
  {
    key: 's3.timeoutMs',
    env: 'LIVE_MEM_S3_TIMEOUT_MS',
    file: 's3.timeout_ms',
    parse: int(100, 600_000),
    description: 'An S3 request that receives nothing for this long fails with storage_error (idle time, not a cap on large transfers)',
    defaultText: '30000',
  },
];

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
      weight: get('embeddings.weight', 0.2), // core/recall/fusion.ts DEFAULT_EMBEDDINGS_WEIGHT (config imports no core)
      ...(values.has('embeddings.local') ? { local: values.get('embeddings.local') as string } : {}),
      ...(values.has('embeddings.localDir') ? { localDir: path.resolve(expandHome(values.get('embeddings.localDir') as string)) } : {}),
      localDtype: get('embeddings.localDtype', 'q8'),
    },
    consolidationTimeoutS: get('consolidationTimeoutS', 600),
    consolidationMaxNotes: get('consolidationMaxNotes', 500),
    synthesisMaxWords: get('synthesisMaxWords', 600),
    consolidationLeaseS: get('consolidationLeaseS', 60),
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
    ...(values.has('token') ? { token: values.get('token') as string } : {}),
    auth: get('auth', 'optional'),
    tools: get('tools', 'all'),
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
