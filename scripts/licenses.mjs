// The licences of what a build bundles. esbuild copies the code of every dependency into dist/, so
// neither the npm package nor the Claude Desktop bundle carries those packages' folders, and with
// them their licence files: this writes them into one file that ships beside the code. The list
// comes from esbuild's metafiles (every input file a build read), so a dependency added later is
// listed without anyone remembering to; one without a licence file stops the build.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The file every build writes, relative to the repository's root. */
export const NOTICES = 'dist/THIRD-PARTY-LICENSES.txt';

/** Folders of the npm packages whose files `metafiles` list as inputs (relative, as esbuild names inputs, to the working folder). */
export function bundledPackages(metafiles) {
  const folders = new Set();
  for (const metafile of metafiles) {
    for (const input of Object.keys(metafile.inputs)) {
      const at = input.lastIndexOf('node_modules/');
      if (at === -1) continue;
      const parts = input.slice(at + 'node_modules/'.length).split('/');
      const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
      folders.add(`${input.slice(0, at)}node_modules/${name}`);
    }
  }
  return [...folders];
}

/** A package's licence and notice files (LICENSE, LICENSE.md, COPYING, NOTICE…), in name order. */
const legalFiles = (dir) =>
  readdirSync(dir)
    .filter((file) => /^(licen[cs]e|copying|notice)(\.(md|txt))?$/i.test(file))
    .sort();

/** Writes `NOTICES` under `root`: each bundled package's name, version, licence and licence text, by name. */
export function writeNotices(root, metafiles) {
  const packages = bundledPackages(metafiles).map((folder) => {
    const dir = path.resolve(folder);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const files = legalFiles(dir);
    if (files.length === 0) throw new Error(`${manifest.name} is bundled into dist/ but has no licence file in ${dir}: its licence cannot ship`);
    return {
      name: manifest.name,
      version: manifest.version,
      license: manifest.license,
      texts: files.map((file) => readFileSync(path.join(dir, file), 'utf8').trim()),
    };
  });
  packages.sort((a, b) => a.name.localeCompare(b.name));
  const rule = '='.repeat(78);
  const text = [
    'live-mem bundles the code of these packages into its dist/ folder. Their licences follow.',
    '',
    ...packages.flatMap((pkg) => [rule, `${pkg.name} ${pkg.version} (${pkg.license})`, rule, '', ...pkg.texts.flatMap((body) => [body, '']), '']),
  ].join('\n');
  const file = path.join(root, NOTICES);
  if (!existsSync(path.dirname(file))) throw new Error(`${path.dirname(file)} does not exist: build first`);
  writeFileSync(file, text);
  return packages.map((pkg) => pkg.name);
}
