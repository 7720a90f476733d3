// The licences and versions of what a build bundles. esbuild copies the code of every dependency into
// dist/, so neither the npm package nor the Claude Desktop bundle carries those packages' folders, and
// with them their licence files and their versions: `npm audit` in a user's project sees live-mem, not
// the code inside it. So each build writes, beside the code:
//  - NOTICES, every bundled package's licence texts, in one file;
//  - BUNDLED, the bundled packages and their exact versions, as a package.json's dependencies: copied
//    as package.json into an empty folder, it gives a lockfile that `npm audit` or osv-scanner checks;
//  - INPUTS (not shipped), every file the builds read, as esbuild's metafiles list them: what the test
//    of both files (test/bundled-dependencies.test.ts) checks them against.
// The list comes from esbuild's metafiles, so a dependency added later is listed without anyone
// remembering to; one without a licence file stops the build.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The file every build writes, relative to the repository's root. */
export const NOTICES = 'dist/THIRD-PARTY-LICENSES.txt';
/** The bundled packages' versions, for an audit (see the head of this file). */
export const BUNDLED = 'dist/BUNDLED-DEPENDENCIES.json';
/** The builds' input files; not shipped. */
export const INPUTS = 'dist/bundle-inputs.json';

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

/** Each bundled package's name, version, licence and licence texts, by name then version. */
function describePackages(metafiles) {
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
  return packages.sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/** NOTICES' text: each package's name, version and licence, then its licence texts. */
function noticesText(packages) {
  const rule = '='.repeat(78);
  return [
    'live-mem bundles the code of these packages into its dist/ folder. Their licences follow.',
    '',
    ...packages.flatMap((pkg) => [rule, `${pkg.name} ${pkg.version} (${pkg.license})`, rule, '', ...pkg.texts.flatMap((body) => [body, '']), '']),
  ].join('\n');
}

/**
 * BUNDLED's manifest: a package.json whose dependencies are the bundled packages at their exact
 * versions. A package bundled at two versions keeps its name for the first and an npm alias
 * (`name-v1.2.3`: `npm:name@1.2.3`) for each other, which npm audit checks under the real name.
 */
function bundledManifest(packages, version) {
  const dependencies = {};
  for (const pkg of packages) {
    const key = pkg.name in dependencies ? `${pkg.name}-v${pkg.version}` : pkg.name;
    dependencies[key] = key === pkg.name ? pkg.version : `npm:${pkg.name}@${pkg.version}`;
  }
  return {
    name: 'live-mem-bundled-dependencies',
    version,
    private: true,
    description: `The packages whose code live-mem ${version} carries in its dist/ folder, which npm audit cannot see in node_modules. To audit them: copy this file as package.json into an empty folder, run \`npm install --package-lock-only\`, then \`npm audit\` (or \`osv-scanner scan source --lockfile package-lock.json\`).`,
    dependencies,
  };
}

/**
 * Writes NOTICES, BUNDLED and INPUTS under `root` from the builds' metafiles; `version` is
 * live-mem's. Returns the bundled packages' names.
 */
export function writeBundleRecords(root, metafiles, version) {
  const packages = describePackages(metafiles);
  if (!existsSync(path.join(root, 'dist'))) throw new Error(`${path.join(root, 'dist')} does not exist: build first`);
  writeFileSync(path.join(root, NOTICES), noticesText(packages));
  writeFileSync(path.join(root, BUNDLED), `${JSON.stringify(bundledManifest(packages, version), null, 2)}\n`);
  // Relative to `root`, wherever the build ran (esbuild names inputs relative to its working folder).
  const inputs = [...new Set(metafiles.flatMap((metafile) => Object.keys(metafile.inputs)))].map((input) => path.relative(root, path.resolve(input))).sort();
  writeFileSync(path.join(root, INPUTS), `${JSON.stringify({ inputs }, null, 2)}\n`);
  return packages.map((pkg) => pkg.name);
}
