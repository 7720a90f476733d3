import { createRequire } from 'node:module';

/** The package version, read from package.json (two folders up from both src/cli and dist/cli). */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * The version of live-mem published to the npm registry from this source, or undefined while none is.
 * `setup --npx` writes `npx -y live-mem@<version>` only when it is this one (VERSION): an entry must
 * launch the code that wrote it, and an unpinned `npx -y live-mem` runs whatever the registry holds
 * under that name — nothing today (`npm view live-mem`: 404), so the client fails to start, and the day
 * someone else registers the name, their code. The commit that publishes a version sets it.
 */
export const PUBLISHED_VERSION: string | undefined = undefined;
