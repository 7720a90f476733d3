/**
 * Section 16 of the benchmark: what a user downloads and installs, and how long a client waits the
 * first time it launches live-mem through npx. This checkout's dist/ is packed (`npm pack`), installed
 * into an empty project with a fresh npm cache (offline: a package with no dependencies needs nothing
 * from the registry), and measured: the tarball, the project's node_modules on disk (`du`), and the
 * packages in it (live-mem included). Then a cold `npx -y -p <tarball> live-mem` (another fresh cache)
 * is timed from spawn to the first tools/list answered through the MCP SDK client — what a client's
 * connect timeout (15 s in the MCP Inspector) has to cover.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { installedPackages, installLocal, npmEnv, packTarball } from '../test/helpers/package.js';
import { atMost, below, figure, type Figure } from './bench-lib.js';

/** Targets from issue 20, for the fs store (the AWS SDK, an optional peer, is not installed). */
const TARGET = { installedMiB: 30, packages: 60, coldNpxMs: 15_000 } as const;

async function diskUsageMiB(dir: string): Promise<number> {
  const { stdout } = await promisify(execFile)('du', ['-sk', dir]);
  return Number(stdout.split('\t')[0]) / 1024;
}

/** Spawn of `npx -y -p <tgz> live-mem` (fresh cache) to its first tools/list answer. */
async function coldNpxMs(tgz: string, dir: string): Promise<number> {
  const start = performance.now();
  const transport = new StdioClientTransport({
    command: 'npx',
    args: ['-y', '-p', tgz, 'live-mem'],
    cwd: dir,
    env: npmEnv(dir, { npm_config_cache: path.join(dir, 'npx-cache'), LIVE_MEM_HOME: path.join(dir, 'home'), LIVE_MEM_LOG_LEVEL: 'warn' }),
    stderr: 'ignore',
  });
  const client = new Client({ name: 'live-mem-bench', version: '0.0.0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    if (tools.length === 0) throw new Error('npx: tools/list answered no tool');
    return performance.now() - start;
  } finally {
    await client.close();
  }
}

export async function benchInstall(): Promise<Figure[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'live-mem-bench-install-'));
  try {
    const tgz = await packTarball(dir);
    const project = path.join(dir, 'project');
    const installStart = performance.now();
    await installLocal(tgz, project);
    const installMs = performance.now() - installStart;
    const nodeModules = path.join(project, 'node_modules');
    const packages = await installedPackages(nodeModules);
    return [
      figure('package_tarball_kib', 'packed tarball (npm pack)', (await stat(tgz)).size / 1024, 'KiB'),
      figure('installed_mib', 'installed size, fs store (node_modules, du)', await diskUsageMiB(nodeModules), 'MiB', atMost(TARGET.installedMiB)),
      figure('installed_packages', '  packages installed (live-mem included)', packages.length, 'packages', atMost(TARGET.packages)),
      figure('install_ms', '  npm install of the tarball (fresh cache)', installMs, 'ms'),
      figure('cold_npx_ms', 'cold npx of the tarball → first tools/list', await coldNpxMs(tgz, dir), 'ms', below(TARGET.coldNpxMs)),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
