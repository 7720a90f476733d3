import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The default space of a server started in `dir` (when LIVE_MEM_SPACE is unset): the name of the
 * git repository holding it (the folder with `.git`, found walking up), else of `dir` itself, made
 * a space id — so every agent a client starts in one project writes to one space without knowing
 * its id. `default` when the name keeps nothing usable (a root folder, only symbols).
 */
export function defaultSpaceFor(dir: string): string {
  let folder = path.resolve(dir);
  for (let at = folder; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, '.git'))) {
      folder = at;
      break;
    }
    if (path.dirname(at) === at) break;
  }
  return toSpaceId(path.basename(folder));
}

/** A folder name as a space id: letters, digits, _ and -, starting with a letter or digit, at most 64. */
export function toSpaceId(name: string): string {
  const id = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[_-]+/, '')
    .slice(0, 64)
    .replace(/[_-]+$/, '');
  return id || 'default';
}
