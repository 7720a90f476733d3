import { stat } from 'node:fs/promises';

/**
 * What `connect` and `setup --url` say about a weak way of reaching a server: a token file others
 * may read, and a token sent in clear over http:// to another machine. Warnings, not refusals: a
 * lab on a private network may mean it, but nobody should learn it from a leak.
 */
export async function remoteWarnings(url: URL, tokenFile: string | undefined): Promise<string[]> {
  return [...(tokenFile === undefined ? [] : await tokenFileWarning(tokenFile)), ...clearTextWarning(url)];
}

/** The token goes in clear over http:// to a host that is not this machine. */
function clearTextWarning(url: URL): string[] {
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return [];
  return [`the token travels in clear to ${url.host} over http://: put the server behind TLS (docs/team.md, "TLS with a reverse proxy")`];
}

/** The token file can be read by the file's group or by everyone (POSIX modes; Windows has none to check). */
async function tokenFileWarning(file: string): Promise<string[]> {
  if (process.platform === 'win32') return [];
  const mode = (await stat(file).catch(() => null))?.mode;
  if (mode === undefined || (mode & 0o044) === 0) return [];
  const who = mode & 0o004 ? 'every user of this machine' : "the file's group";
  return [`the token file ${file} can be read by ${who} (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): chmod 600 ${file}`];
}

/** localhost, 127.0.0.0/8 and ::1: names that never leave this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}
