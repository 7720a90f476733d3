import { realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * A git remote read three ways: the project it names (host, owner path and repository, one for every
 * form git takes of one remote), the repository's bare name (the rule before, kept to find the spaces
 * it named), and the remote as it may be shown (no credentials).
 */

/** The project a remote names: `canonical` is what a space records, `readable` the words its id starts with. */
export interface RemoteProject {
  /** `github.com/acme/webapp` (host lowercased, path case-folded), or a local repository's resolved path. */
  canonical: string;
  /** `acme-webapp`: the owner path and repository; a local path's last two folders. */
  readable: string;
}

/** A URL with a scheme: `scheme://authority/path`, a query or fragment after. */
const WITH_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(.*)$/s;
/**
 * scp-like `[user@]host:path`, as git tells it from a local path: a colon before any slash. The user
 * part runs to the last `@` before the host (a password may hold an `@`).
 */
const SCP_LIKE = /^([^/\\]*@)?([^/\\:@]+):(.*)$/s;
/** `C:\repos\x`, `C:/repos/x`: a Windows path, not the host `C`. */
const DRIVE = /^[A-Za-z]:([\\/]|$)/;

/**
 * The project `remote` names, or undefined when it names none (no path, no host). The ssh, https,
 * scp-like, `.git`, case and port forms of one remote give one canonical; a `file://` URL or a
 * local path gives the path, resolved from `base` (the work tree: where git runs) and through links.
 */
export function remoteProject(remote: string, base: string): RemoteProject | undefined {
  const text = remote.trim();
  const url = WITH_SCHEME.exec(text);
  if (url && (url[1] as string).toLowerCase() === 'file') return localProject(decoded(url[3] as string), base);
  if (url) return hostProject(hostOf(url[2] as string), decoded(url[3] as string));
  const scp = DRIVE.test(text) ? null : SCP_LIKE.exec(text);
  if (scp) return hostProject((scp[2] as string).toLowerCase(), (scp[3] as string).replace(/[?#].*$/s, ''));
  return text ? localProject(text, base) : undefined;
}

/**
 * Whether `text` is written as a remote git reaches over a network: a URL of a scheme other than
 * `file` (`https://`, `ssh://`, `git://`), or scp-like `[user@]host:path` (not `C:\…`). A local
 * path or a `file://` URL is not: it names a folder of one machine.
 */
export function isNetworkRemote(text: string): boolean {
  const trimmed = text.trim();
  const url = WITH_SCHEME.exec(trimmed);
  if (url) return (url[1] as string).toLowerCase() !== 'file';
  return !DRIVE.test(trimmed) && SCP_LIKE.test(trimmed);
}

/** An authority's host: no user or password (up to the last `@`), no port, lowercase. */
function hostOf(authority: string): string {
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  const bracketed = /^\[[^\]]*\]/.exec(host); // an IPv6 address keeps its colons
  return (bracketed ? bracketed[0] : host.replace(/:.*$/s, '')).toLowerCase();
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function hostProject(host: string, repoPath: string): RemoteProject | undefined {
  const parts = repoPath
    .toLowerCase()
    .split(/[\\/]+/)
    .filter((part) => part !== '' && part !== '.');
  if (parts[parts.length - 1] === '.git') parts.pop();
  const last = parts.pop()?.replace(/\.git$/, '');
  if (!host || !last) return undefined;
  parts.push(last);
  return { canonical: `${host}/${parts.join('/')}`, readable: parts.join('-') };
}

/** A local repository: its resolved path (a link followed when it exists), without a trailing `.git` folder. */
function localProject(repoPath: string, base: string): RemoteProject | undefined {
  let resolved = path.resolve(base, repoPath);
  try {
    resolved = realpathSync(resolved);
  } catch {
    // Not on this machine (a remote of another's): the path as written is still the identity.
  }
  if (path.basename(resolved) === '.git') resolved = path.dirname(resolved);
  const parts = resolved.split(/[\\/]+/).filter(Boolean);
  const last = parts.pop()?.replace(/\.git$/i, '');
  if (!last) return undefined;
  return { canonical: resolved, readable: [...parts.slice(-1), last].join('-') };
}

/**
 * The repository's bare name in a remote URL of any form git takes (`https://host/owner/name.git`,
 * `user@host:owner/name.git`, `file:///srv/name.git`, `C:\repos\name`): the rule that named a
 * project's space before the owner and host were part of it. Undefined when it names none.
 */
export function repositoryName(remote: string): string | undefined {
  let rest = remote.trim();
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(rest);
  if (scheme) {
    // The host (and user, port) up to the first slash; a query or fragment is no part of the path.
    rest = rest
      .slice(scheme[0].length)
      .replace(/[?#].*$/, '')
      .replace(/^[^/]*/, '');
  } else if (/^[^/\\:]+:/.test(rest) && !DRIVE.test(rest)) {
    // scp-like `host:path` (no slash before the colon), not a Windows drive.
    rest = rest.slice(rest.indexOf(':') + 1);
  }
  const parts = rest.split(/[\\/]+/).filter((part) => part !== '');
  let name = parts.pop();
  if (name === '.git') name = parts.pop();
  name = name?.replace(/\.git$/i, '');
  return name && name !== '.' && name !== '..' ? name : undefined;
}

/**
 * A remote as it may be shown to anyone (`space_source_detail`, logs, errors): no user or password
 * (up to the last `@` of the authority: `https://user:p@ss@host/…`), no query or fragment (a
 * `?private_token=…`). A local path is shown as it is.
 */
export function withoutCredentials(remote: string): string {
  const text = remote.trim();
  const url = WITH_SCHEME.exec(text);
  if (url) {
    const authority = url[2] as string;
    return `${url[1]}://${authority.slice(authority.lastIndexOf('@') + 1)}${url[3]}`;
  }
  const scp = DRIVE.test(text) ? null : SCP_LIKE.exec(text);
  if (scp) return `${scp[2]}:${(scp[3] as string).replace(/[?#].*$/s, '')}`;
  return text;
}
