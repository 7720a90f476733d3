import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LiveMemError } from '../shared/errors.js';
import { resolveSettings, type Settings } from './settings.js';

export const CONFIG_FILE_NAME = 'live-mem.yaml';

export interface LoadOptions {
  env?: Record<string, string | undefined>;
  /** --config: an explicit file, which must exist. */
  configFile?: string;
  flags?: Record<string, string | undefined>;
}

/**
 * Gathers the settings: the config file (--config, else live-mem.yaml under the home folder, if
 * present), the environment, then the flags.
 */
export function loadSettings(options: LoadOptions = {}): Settings {
  const env = options.env ?? process.env;
  const { file: candidate, explicit } = settingsFile({ env, ...(options.configFile ? { configFile: options.configFile } : {}), home: options.flags?.home });
  if (explicit && !existsSync(candidate)) throw new LiveMemError('config_error', `config file not found: ${candidate}`);
  const file = existsSync(candidate) ? readConfigFile(candidate) : undefined;
  return resolveSettings({ env, ...(file ? { file, configFile: candidate } : {}), ...(options.flags ? { flags: options.flags } : {}) });
}

/**
 * Where the settings file is: --config, else LIVE_MEM_CONFIG (explicit: it must exist to be read),
 * else live-mem.yaml in the home folder (--home, LIVE_MEM_HOME, ~/.live-mem), read when present.
 * `setup model` writes the same file this reads.
 */
export function settingsFile(options: { env: Record<string, string | undefined>; configFile?: string; home?: string | undefined }): {
  file: string;
  explicit: boolean;
} {
  const explicit = options.configFile ?? options.env.LIVE_MEM_CONFIG;
  if (explicit) return { file: path.resolve(explicit), explicit: true };
  const home = options.home ?? options.env.LIVE_MEM_HOME ?? path.join(homedir(), '.live-mem');
  return { file: path.join(home.replace(/^~(?=$|\/)/, homedir()), CONFIG_FILE_NAME), explicit: false };
}

function readConfigFile(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new LiveMemError('config_error', `cannot read ${file}: ${(cause as Error).message}`, {}, { cause });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new LiveMemError('config_error', `${file} must be a YAML mapping`);
  return parsed as Record<string, unknown>;
}
