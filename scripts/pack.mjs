// `npm run tarball [folder]`: the package as a user installs it from a file, packed from this built
// checkout (dist/ as it is: nothing is built here) into `folder` (default: here); prints its path.
//
// It is `npm pack` with one change: the package.json inside keeps no `prepare` script. `prepare`
// builds a checkout (`npm ci`) and a git install; it is never run for a tarball, yet npm 11.16 and
// later list it for one as an install script "not yet covered by allowScripts" and warn at every
// install of the file. The registry never lists `prepare`, so a published package needs no change.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout (the tests may run this from a mirror whose package.json links back here). */
const root = path.dirname(realpathSync(fileURLToPath(new URL('../package.json', import.meta.url))));
const destination = path.resolve(process.argv[2] ?? '.');
const npm = (args) => execFileSync('npm', [...args, '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

// The files npm would pack (`files`, README, the package.json…), with their modes.
const [listing] = JSON.parse(npm(['pack', '--dry-run']));
const stage = await mkdtemp(path.join(tmpdir(), 'live-mem-tarball-'));
try {
  for (const file of listing.files) {
    const to = path.join(stage, file.path);
    await mkdir(path.dirname(to), { recursive: true });
    await copyFile(path.join(root, file.path), to);
    await chmod(to, file.mode);
  }
  const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  delete manifest.scripts.prepare;
  await writeFile(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await mkdir(destination, { recursive: true });
  const [packed] = JSON.parse(npm(['pack', stage, '--pack-destination', destination]));
  process.stdout.write(`${path.join(destination, packed.filename)}\n`);
} finally {
  await rm(stage, { recursive: true, force: true });
}
