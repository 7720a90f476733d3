/**
 * The package as a user gets it (test/e2e/install.test.ts and the bench's install section): `npm pack`
 * of this checkout's built dist/, installed into an empty folder or a global prefix, each npm run with
 * its own fresh cache and `--offline`, so the registry is never asked — the package must need nothing
 * from it — and the user's npm settings (the npm_config_* that `npm test` exports) do not leak in.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The checkout: where package.json really is. The tests may run from a compiled mirror of it
 * (scripts/run-tests.mjs), whose package.json and dist/ are links back here; npm packs and git lists
 * the checkout itself.
 */
export const ROOT = path.dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
/** The AWS SDK this checkout installed for its tests: the optional peer a user adds for S3. */
export const S3_SDK_DIR = path.join(ROOT, 'node_modules', '@aws-sdk', 'client-s3');

const run = promisify(execFile);

/** An environment with no npm settings but a fresh cache under `dir`, offline. */
export function npmEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^npm_/i.test(key)) env[key] = value;
  }
  return { ...env, npm_config_cache: path.join(dir, '.npm-cache'), npm_config_offline: 'true', npm_config_update_notifier: 'false', ...extra };
}

/** An npm command's output, stdout and stderr (where npm warns) together. */
async function npm(args: string[], cwd: string, cacheDir: string): Promise<string> {
  const { stdout, stderr } = await run('npm', [...args, '--no-audit', '--no-fund'], { cwd, env: npmEnv(cacheDir), maxBuffer: 16 * 1024 * 1024 });
  return `${stdout}${stderr}`;
}

/** `npm run tarball` of this checkout into `dir` (scripts/pack.mjs: dist/ as built); the tarball's path. */
export async function packTarball(dir: string): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'scripts', 'pack.mjs'), dir], { cwd: ROOT, env: npmEnv(dir), maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/** Installs the tarball into `dir` as a project dependency (`npm install <tgz>` in an empty project); what npm printed. */
export async function installLocal(tgz: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), '{ "name": "empty-project", "private": true }\n');
  return npm(['install', tgz], dir, dir);
}

/** Installs the tarball globally under `prefix` (`npm install -g --prefix`), its bin in `prefix/bin`; what npm printed. */
export async function installGlobal(tgz: string, prefix: string): Promise<string> {
  await mkdir(prefix, { recursive: true });
  return npm(['install', '-g', '--prefix', prefix, tgz], prefix, prefix);
}

/** The packages under a node_modules folder (scoped ones as `@scope/name`), nested ones included. */
export async function installedPackages(nodeModules: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        for (const scoped of await readdir(full)) {
          found.push(`${entry.name}/${scoped}`);
          await visit(path.join(full, scoped, 'node_modules'));
        }
      } else {
        found.push(entry.name);
        await visit(path.join(full, 'node_modules'));
      }
    }
  };
  await visit(nodeModules);
  return found.sort();
}
