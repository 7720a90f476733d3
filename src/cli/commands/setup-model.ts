import { isMap, isScalar, parse, parseDocument } from 'yaml';
import { settingsFile } from '../../config/load.js';
import { FIELDS } from '../../config/fields.js';
import { resolveSettings } from '../../config/settings.js';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import type { CommandDef } from '../command.js';
import { apply, backupStamp, type FileChange, plan, secretFrom } from './setup-files.js';

/**
 * `live-mem setup model`: the model consolidation, summaries and compaction use, written once into
 * the settings file every live-mem process reads (live-mem.yaml), instead of the same URL, name and
 * key pasted into each client's entry. The key is a reference to an environment variable
 * (`${NAME}`, read by each process) or, when it must be, the key itself in a file only its owner reads.
 */

export interface ModelOptions {
  baseUrl: string;
  model: string;
  /** The environment variable each process reads the key from (`api_key: ${NAME}`). */
  apiKeyEnv?: string;
  /** A file holding the key, written into the settings file (mode 0600). */
  apiKeyFile?: string;
  contextWindow?: string;
  print?: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value as the setting's own parser reads it: the same refusal as the same value in the file would get. */
function parsed(key: string, raw: string, flag: string): unknown {
  const field = FIELDS.find((candidate) => candidate.key === key);
  if (!field) throw new Error(`no setting ${key}`);
  try {
    return field.parse(raw, flag);
  } catch (error) {
    throw isLiveMemError(error) ? invalid(error.message) : error;
  }
}

/**
 * live-mem.yaml's new text with `values` under `llm:`; `undefined` when it already holds them. Every
 * other key, and the comments, are kept (the YAML document is edited, not rewritten). Refuses a file
 * that is not YAML, not a mapping, or whose `llm` is not a mapping: nothing is written then.
 */
export function mergeModel(old: string | undefined, values: Record<string, string | number>, file: string): string | undefined {
  const document = parseDocument(old ?? '');
  const [error] = document.errors;
  if (error) throw invalid(`${file} is not valid YAML (${error.message.split('\n')[0]}): fix it, then run setup again; nothing was written`);
  if (document.contents !== null && !isMap(document.contents))
    throw invalid(`${file} is not a YAML mapping: fix it, then run setup again; nothing was written`);
  const llm = document.get('llm', true);
  // `llm:` with nothing under it: a mapping takes its place.
  if (isScalar(llm) && llm.value === null) document.delete('llm');
  else if (llm !== undefined && !isMap(llm)) throw invalid(`${file}: "llm" is not a mapping: fix it, then run setup again; nothing was written`);
  let changed = false;
  for (const [key, value] of Object.entries(values)) {
    if (document.getIn(['llm', key]) === value) continue;
    document.setIn(['llm', key], value);
    changed = true;
  }
  return changed ? String(document) : undefined;
}

export async function setupModel(
  options: ModelOptions,
  globals: { config?: string | undefined; home?: string | undefined },
  context: { env?: NodeJS.ProcessEnv; now?: () => Date } = {},
): Promise<Record<string, unknown>> {
  const env = context.env ?? process.env;
  const baseUrl = parsed('llm.baseUrl', options.baseUrl, '--base-url') as string;
  const model = options.model.trim();
  if (model === '') throw invalid('--model is empty: name the model (gpt-4.1-mini, qwen2.5:14b…)');
  if (options.apiKeyEnv !== undefined && options.apiKeyFile !== undefined) throw invalid('give --api-key-env or --api-key-file, not both');
  if (options.apiKeyEnv !== undefined && !ENV_NAME.test(options.apiKeyEnv))
    throw invalid(`--api-key-env names an environment variable (letters, digits, _), got ${JSON.stringify(options.apiKeyEnv)}`);
  const key = options.apiKeyFile === undefined ? undefined : await secretFrom(options.apiKeyFile, '--api-key-file');
  const values: Record<string, string | number> = {
    base_url: baseUrl,
    model,
    ...(options.apiKeyEnv !== undefined ? { api_key: `\${${options.apiKeyEnv}}` } : {}),
    ...(key !== undefined ? { api_key: key } : {}),
    ...(options.contextWindow !== undefined ? { context_window: parsed('llm.contextWindow', options.contextWindow, '--context-window') as number } : {}),
  };
  const { file } = settingsFile({ env, ...(globals.config ? { configFile: globals.config } : {}), home: globals.home });
  const planned = await plan('settings', file, (old) => mergeModel(old, values, file), key !== undefined);
  const text = planned.next ?? planned.old ?? '';
  try {
    // The file every live-mem process reads must still load: a refusal here beats one in every client.
    resolveSettings({ file: (parse(text) as Record<string, unknown> | null) ?? {}, configFile: file, env });
  } catch (error) {
    throw invalid(`${file} would not load (${(error as Error).message}): fix it, then run setup again; nothing was written`);
  }
  const notes = [
    options.apiKeyEnv !== undefined
      ? `the key is read from $${options.apiKeyEnv} by each live-mem process: it must be set where each client starts (a desktop app does not read your shell's profile); --api-key-file writes the key itself instead`
      : key !== undefined
        ? `the key from ${options.apiKeyFile} is written into ${file}, readable by you only (mode 0600)`
        : 'no key given: an endpoint that needs one (OpenAI, Anthropic) takes --api-key-env NAME or --api-key-file FILE',
    'every client that launches live-mem with this settings file uses this model (LIVE_MEM_LLM_* variables in an entry still win)',
  ];
  const summary = { status: 'ok', settings: file, base_url: baseUrl, model, notes };
  if (options.print) {
    const shown: FileChange = {
      kind: 'settings',
      file,
      action: 'not written (--print)',
      content: key === undefined ? text : text.replaceAll(key, `<the key in ${options.apiKeyFile}>`),
      ...(key !== undefined ? { secret: true } : {}),
    };
    return { ...summary, files: [shown], message: 'nothing written (--print): this is the whole file it would hold' };
  }
  const change = await apply(planned, backupStamp((context.now ?? (() => new Date()))()));
  return {
    ...summary,
    files: [change],
    message: change.action === 'unchanged' ? 'already set up: nothing changed' : 'done: `live-mem doctor` checks that the model answers',
  };
}

export const setupModelCommand: CommandDef = {
  name: 'model',
  description: 'write the model consolidation uses into the settings file every client reads (live-mem.yaml), once for all of them',
  options: [
    { flags: '--base-url <url>', description: 'OpenAI-compatible endpoint, including /v1', required: true },
    { flags: '--model <name>', description: 'model name', required: true },
    { flags: '--api-key-env <name>', description: 'the environment variable each process reads the key from (written as a reference, not the key)' },
    { flags: '--api-key-file <file>', description: 'a file holding the key: the key itself is written into the settings file (mode 0600)' },
    { flags: '--context-window <n>', description: "the model's context window in tokens" },
    { flags: '--print', description: 'only show the settings file it would write; write nothing' },
  ],
  // `setup` takes the --print written after `model` (commander reads a parent's options anywhere): the globals have it.
  storeless: (globals, options: ModelOptions) => setupModel({ ...options, print: (globals as { print?: boolean }).print === true }, globals),
  view: 'setup',
};
