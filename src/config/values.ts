import { LiveMemError } from '../shared/errors.js';

/** How a setting's text is read (fields.ts): each parser takes the raw text and where it came from, and throws `config_error`. */

export const str = (raw: string) => raw;
export const int = (min: number, max: number) => (raw: string, source: string) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LiveMemError('config_error', `${source} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
};
export const num = (min: number, max: number) => (raw: string, source: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new LiveMemError('config_error', `${source} must be a number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
};
export const url = (raw: string, source: string) => {
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new LiveMemError('config_error', `${source} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
};
export const bool = (raw: string, source: string) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new LiveMemError('config_error', `${source} must be true or false, got ${JSON.stringify(raw)}`);
};
/** A profile or tool names: normalised to `a,b,c`; which names exist is checked when serving. */
export const toolList = (raw: string, source: string) => {
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
export const modelId = (raw: string, source: string) => {
  if (!/^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(raw) || raw.includes('..'))
    throw new LiveMemError('config_error', `${source} must be a model id such as Xenova/all-MiniLM-L6-v2, got ${JSON.stringify(raw)}`);
  return raw;
};

/** A space id, as the core accepts them (validate.ts). */
export const spaceIdSetting = (raw: string, source: string) => {
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/.test(raw)) {
    throw new LiveMemError(
      'config_error',
      `${source} must be a space id (letters, digits, _ or -, up to 64, starting with a letter or digit), got ${JSON.stringify(raw)}`,
    );
  }
  return raw;
};
export const oneOf =
  (...values: string[]) =>
  (raw: string, source: string) => {
    if (!values.includes(raw)) throw new LiveMemError('config_error', `${source} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw;
  };
