/**
 * The packed tarball as a user installs it: into an empty project, globally (under a prefix) and through
 * npx, all offline with fresh npm caches — the package needs nothing from the registry — then launched the
 * way each documented client configuration launches it, answering tools/list through the MCP SDK client
 * over stdio, and exporting a space through npx with no LLM configured. The library entry works from the
 * install, its declarations type-check with nothing else installed, and the S3 store says how to add the
 * AWS SDK when it is missing, then works with the SDK installed beside live-mem.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { installedPackages, installGlobal, installLocal, npmEnv, packTarball, ROOT, S3_SDK_DIR } from '../helpers/package.js';
import { makeS3Harness, requireS3OrSkip, s3ProcessEnv } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);

/** Connects the SDK client to `command args` over stdio and returns the names tools/list answers. */
async function toolNames(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<string[]> {
  const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'live-mem-install-test', version: '0.0.0' });
  try {
    await client.connect(transport);
    return (await client.listTools()).tools.map((tool) => tool.name);
  } catch (error) {
    throw new Error(`${command} ${args.join(' ')}: ${(error as Error).message}\n${stderr}`);
  } finally {
    await client.close();
  }
}

describe('the packed tarball, installed', () => {
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  let tgz: string;
  let project: string;
  let prefix: string;
  /** What npm printed installing the tarball into the project and globally. */
  let printed: string[];
  /** The environment of a launched live-mem: its own store, no npm settings. */
  let env: (extra?: Record<string, string>) => Record<string, string>;

  before(async () => {
    scratch = await tempDir('live-mem-install');
    tgz = await packTarball(scratch.dir);
    project = path.join(scratch.dir, 'project');
    prefix = path.join(scratch.dir, 'global');
    printed = await Promise.all([installLocal(tgz, project), installGlobal(tgz, prefix)]);
    env = (extra = {}) => npmEnv(scratch.dir, { LIVE_MEM_HOME: path.join(scratch.dir, 'home'), LIVE_MEM_AGENT: 'installer', ...extra });
  });
  after(() => scratch.remove());

  it('installs live-mem alone: no dependency, the AWS SDK neither', async () => {
    assert.deepEqual(await installedPackages(path.join(project, 'node_modules')), ['live-mem']);
    assert.deepEqual(await installedPackages(path.join(prefix, 'lib', 'node_modules')), ['live-mem']);
  });

  it('installs without a warning: the package.json it ships has no `prepare` (npm lists it for a tarball it never runs it for)', async () => {
    for (const output of printed) {
      assert.match(output, /added 1 package/, output);
      assert.doesNotMatch(output, /npm warn|allowScripts|install-scripts/i, output);
    }
    const { stdout: shipped } = await run('tar', ['-xzOf', tgz, 'package/package.json']);
    const scripts = (JSON.parse(shipped) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.prepare, undefined);
    const checkout = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(checkout.scripts.prepare, 'npm run build', 'a checkout and a git install still build on install');
    assert.deepEqual({ ...scripts, prepare: checkout.scripts.prepare }, checkout.scripts, 'nothing else differs');
  });

  it("ships no source map and no reference to one, README's screenshot, and the licences and versions of the code it bundles", async () => {
    const { stdout: list } = await run('tar', ['-tzf', tgz]);
    assert.doesNotMatch(list, /\.map$/m);
    assert.match(list, /^package\/docs\/screenshots\/live\.png$/m);
    assert.match(list, /^package\/dist\/THIRD-PARTY-LICENSES\.txt$/m);
    assert.match(list, /^package\/dist\/BUNDLED-DEPENDENCIES\.json$/m);
    assert.match(list, /^package\/LICENSE$/m);
    const installed = path.join(project, 'node_modules', 'live-mem');
    const files = (await readdir(installed, { recursive: true })).filter((file) => /\.(c?js|d\.ts)$/.test(file));
    assert.ok(files.length > 10, files.join(', '));
    for (const file of files) assert.doesNotMatch(await readFile(path.join(installed, file), 'utf8'), /sourceMappingURL/, file);
  });

  it('answers tools/list launched as `live-mem` from the global bin on the PATH', async () => {
    const bin = path.join(prefix, 'bin');
    const names = await toolNames('live-mem', [], env({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` }), scratch.dir);
    assert.ok(names.includes('live_note'), names.join(', '));
  });

  it('answers tools/list launched as `node <absolute path>/bin/live-mem.cjs`', async () => {
    const bin = path.join(project, 'node_modules', 'live-mem', 'bin', 'live-mem.cjs');
    assert.ok(path.isAbsolute(bin));
    const names = await toolNames('node', [bin], env(), scratch.dir);
    assert.ok(names.includes('live_note'), names.join(', '));
  });

  it('answers tools/list launched by `npx -y` with a fresh cache', async () => {
    const names = await toolNames('npx', ['-y', '-p', tgz, 'live-mem'], env({ npm_config_cache: path.join(scratch.dir, 'npx-cache') }), scratch.dir);
    assert.ok(names.includes('live_note'), names.join(', '));
  });

  it('exports a space through `npx -y`, with no LLM configured', async () => {
    const bin = path.join(project, 'node_modules', 'live-mem', 'bin', 'live-mem.cjs');
    await run(process.execPath, [bin, 'space', 'create', 'handoff'], { env: env() });
    await run(process.execPath, [bin, 'note', 'handoff', 'for whoever picks this up', '--category', 'insight'], { env: env() });
    const npx = env({ npm_config_cache: path.join(scratch.dir, 'npx-cache') });
    await run('npx', ['-y', '-p', tgz, 'live-mem', 'export', 'handoff', '-o', 'handoff.tar.gz'], { env: npx, cwd: scratch.dir });
    const { stdout } = await run('tar', ['tzf', path.join(scratch.dir, 'handoff.tar.gz')]);
    assert.match(stdout, /handoff\/live\/.*_insight_.*\.md/);
  });

  it("import('live-mem') from the project opens a core on the memory driver", async () => {
    const script = [
      "const { createCore, createMemoryDriver, ownerCaller } = await import('live-mem');",
      'const core = createCore({ storage: createMemoryDriver() });',
      "const caller = ownerCaller('embedder');",
      "await core.spaces.create(caller, { space_id: 'embedded' });",
      "await core.notes.write(caller, { space_id: 'embedded', category: 'observation', content: 'from the library' });",
      "const read = await core.notes.read(caller, { space_id: 'embedded' });",
      'console.log(JSON.stringify(read.notes.map((note) => note.content)));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), ['from the library']);
  });

  it('its declarations type-check in the project with nothing else installed', async () => {
    const consumer = path.join(project, 'consumer.ts');
    await writeFile(
      consumer,
      "import { createCore, createMemoryDriver, type Core } from 'live-mem';\nexport const core: Core = createCore({ storage: createMemoryDriver() });\n",
    );
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const typeRoots = path.join(ROOT, 'node_modules', '@types');
    await run(
      process.execPath,
      [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--typeRoots', typeRoots, '--types', 'node', consumer],
      {
        cwd: project,
      },
    );
  });

  it('the S3 store without the AWS SDK: exit 2, saying how to add it for each install', async () => {
    const s3 = { LIVE_MEM_STORAGE: 's3', LIVE_MEM_S3_BUCKET: 'any', LIVE_MEM_S3_ENDPOINT: 'http://127.0.0.1:9' };
    const bin = path.join(project, 'node_modules', 'live-mem', 'bin', 'live-mem.cjs');
    const failed = await run(process.execPath, [bin, 'space', 'list'], { env: env(s3) }).then(
      () => assert.fail('the S3 store ran without the AWS SDK'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 2);
    const message = failed.stderr.trim();
    assert.match(message, /^live-mem: the s3 storage needs the AWS SDK \(@aws-sdk\/client-s3\), which is not installed/);
    for (const route of ['npm install -g @aws-sdk/client-s3', 'npx -y -p live-mem -p @aws-sdk/client-s3 live-mem', 'npm install @aws-sdk/client-s3']) {
      assert.ok(message.includes(route), `${route} in: ${message}`);
    }
    assert.doesNotMatch(message, /ERR_MODULE_NOT_FOUND|\n\s+at /);
  });

  it('a local embedding model without @huggingface/transformers: search goes on by BM25, and the log says how to add it', async () => {
    const local = { LIVE_MEM_EMBEDDINGS_LOCAL: 'Xenova/all-MiniLM-L6-v2', LIVE_MEM_EMBEDDINGS_LOCAL_DIR: path.join(project, 'models') };
    const bin = path.join(project, 'node_modules', 'live-mem', 'bin', 'live-mem.cjs');
    await run(process.execPath, [bin, 'note', 'local-embed', 'a note to search'], { env: env(local) });
    const { stdout, stderr } = await run(process.execPath, [bin, 'recall', 'local-embed', 'note', '--json'], { env: env(local) });
    assert.equal((JSON.parse(stdout) as { mode: string }).mode, 'bm25');
    assert.match(stderr, /LIVE_MEM_EMBEDDINGS_LOCAL needs @huggingface\/transformers, which is not installed/);
    for (const route of ['npm install -g @huggingface/transformers', 'npm install @huggingface/transformers'])
      assert.ok(stderr.includes(route), `${route} in: ${stderr}`);
    assert.doesNotMatch(stderr, /ERR_MODULE_NOT_FOUND|\n\s+at /);
  });

  const s3 = requireS3OrSkip('the S3 store with the AWS SDK beside a global install');
  if (s3) {
    it('the S3 store works with the AWS SDK installed beside the global live-mem (radosgw)', async () => {
      // A sibling in the prefix's node_modules, as `npm install -g @aws-sdk/client-s3` puts it; linked
      // to this checkout's copy so the test needs no registry (Node resolves the link to its real path
      // for the SDK's own dependencies, and finds the sibling from live-mem's chunks).
      const scope = path.join(prefix, 'lib', 'node_modules', '@aws-sdk');
      await mkdir(scope, { recursive: true });
      await symlink(S3_SDK_DIR, path.join(scope, 'client-s3'), 'dir');
      assert.deepEqual(await readdir(scope), ['client-s3']);
      const harness = await makeS3Harness();
      try {
        const live = env({ ...s3ProcessEnv(s3, harness.prefix), PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH ?? ''}` });
        await run('live-mem', ['note', 'shared', 'stored in S3 by the global install'], { env: live });
        const { stdout } = await run('live-mem', ['read', 'shared', '--json'], { env: live });
        assert.match(stdout, /stored in S3 by the global install/);
      } finally {
        await harness.cleanup();
      }
    });
  }
});
