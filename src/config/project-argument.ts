import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isNetworkRemote, withoutCredentials } from './git-remote.js';
import { type NoProject, type ProjectIdentity, projectIdentity, remoteIdentity } from './project-identity.js';

/**
 * A call's `project` argument: the project an agent says it works in, for a client that neither
 * starts the server in it nor sends roots (Claude Desktop and Cline start servers in `/`). Either
 * the folder it works in, read as a root or the server's folder is (project-identity.ts), or the
 * project's git remote in any form git takes, or `host/owner/repo` as a browser shows it: a remote
 * gives the space its clones give, so every client of one project meets in one space however it
 * names the project. A folder is read on the server's machine: over HTTP (`folders: false`) it
 * names nothing there, and is refused with the way to its remote.
 */
export function projectOfArgument(text: string, where: { home: string | undefined; folders: boolean }): ProjectIdentity | NoProject {
  const given = text.trim();
  const shown = withoutCredentials(given);
  if (given.length > MAX_ARGUMENT_CHARS) return { none: `project has ${given.length} characters; a folder or a remote has at most ${MAX_ARGUMENT_CHARS}` };
  const folder = folderOf(given, where.home);
  if (folder !== undefined) {
    if (!where.folders)
      return {
        none:
          `${shown} is a folder of your machine, which means nothing to a server reached over HTTP: give the project's git remote instead ` +
          `(\`git remote get-url origin\` in that folder prints it), such as github.com/acme/api`,
      };
    if (!isFolder(folder)) return { none: `${folder} is no folder on the machine the server runs on` };
    return projectIdentity(folder, where.home);
  }
  const remote = isNetworkRemote(given) ? given : HOST_PATH.test(given) ? `https://${given}` : undefined;
  if (remote !== undefined) return remoteIdentity(remote, '/', { named: 'the remote' }) ?? { none: `the remote ${shown} names no repository` };
  return {
    none:
      `'${shown}' is neither ${where.folders ? "your workspace folder's absolute path nor " : ''}a git remote with its host, ` +
      `such as github.com/acme/api or git@github.com:acme/api.git (\`git remote get-url origin\` prints it)`,
  };
}

/** Longer is no folder or remote anyone passes: refused rather than read. */
const MAX_ARGUMENT_CHARS = 1_000;

/** `github.com/acme/api`: a host (with a dot, or localhost) then a path, as a browser's address bar shows a repository. */
const HOST_PATH = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)\/\S+$/;

/** The folder `text` names: an absolute path, `~/…` (the home folder), or a `file://` URL; undefined for anything else. */
function folderOf(text: string, home: string | undefined): string | undefined {
  if (/^file:\/\//i.test(text)) {
    try {
      return fileURLToPath(text);
    } catch {
      return text;
    }
  }
  if ((text === '~' || text.startsWith('~/')) && home) return path.join(home, text.slice(1));
  if (path.isAbsolute(text)) return path.resolve(text);
  return /^[A-Za-z]:[\\/]/.test(text) ? text : undefined; // a Windows path, on a server that is not
}

function isFolder(folder: string): boolean {
  try {
    return statSync(folder).isDirectory();
  } catch {
    return false;
  }
}
