import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { LiveMemError } from '../shared/errors.js';

/** One file of the page, held in memory: it is small, and served on every visit. */
export interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
  etag: string;
}

/** URL path → asset. */
export type UiAssets = ReadonlyMap<string, Asset>;

/** The files the build writes into dist/ui/public/ (scripts/build.mjs) and the paths they are served at. */
const FILES: Array<[urlPath: string, file: string, type: string]> = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ['/assets/app.js', 'app.js', 'text/javascript; charset=utf-8'],
  ['/assets/app.css', 'app.css', 'text/css; charset=utf-8'],
];

/**
 * Loads the viewer's files once, at start, with their gzip and an ETag. They ship in the package
 * (no CDN: the viewer works offline); a missing one means a broken build, said at start rather than
 * as a blank page.
 */
export async function loadUiAssets(dir: string): Promise<UiAssets> {
  const assets = new Map<string, Asset>();
  for (const [urlPath, file, type] of FILES) {
    const body = await readFile(path.join(dir, file)).catch((error: unknown) => {
      throw new LiveMemError('config_error', `the web viewer's ${file} is missing from ${dir}: run npm run build`, {}, { cause: error });
    });
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    assets.set(urlPath, { body, gzip: gzipSync(body, { level: 9 }), type, etag });
  }
  return assets;
}

/**
 * Where the build put the viewer's files: `dist/ui/public/` of the package this module belongs to,
 * found by walking up to the package root, so it holds for the bundled CLI (dist/cli/) and for the
 * sources run by tsx alike.
 */
export function defaultAssetsDir(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'dist'))) return path.join(dir, 'dist', 'ui', 'public');
    if (path.dirname(dir) === dir) return path.join(path.dirname(from), 'public');
  }
}
