/**
 * Every way the CLI can fail, run as a new user would: one line on stderr, `live-mem: …`, never an
 * `Error:` or a stack (unless LIVE_MEM_LOG_LEVEL=debug), and the exit code the README promises:
 * 1 a domain error, 2 a usage or configuration error.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const ADMIN = 'admin-secret-0123456789abcdefghijklmnopqrstuvwxyz';

describe('CLI errors: one clear line and the promised exit code', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let readToken: string;
  const run = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      cwd: home.dir,
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell', ...env },
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
    });

  /**
   * Runs `args`, expects `exitCode` and one line `live-mem: <matching>` on stderr, with at most the
   * error's hint on a second line, nothing else.
   */
  const fails = async (args: string[], exitCode: number, line: RegExp, env: Record<string, string> = {}) => {
    const result = await run(args, env);
    assert.equal(result.exitCode, exitCode, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /^live-mem: [^\n]+\n(?: {2}hint: [^\n]+\n)?$/, `one line and its hint: ${JSON.stringify(result.stderr)}`);
    assert.match(`${result.stderr.split('\n')[0]}\n`, line);
    assert.doesNotMatch(result.stderr, /Error:|\n\s+at /, 'no error class, no stack');
    assert.equal(result.stdout, '');
    return result;
  };

  before(async () => {
    home = await tempDir();
    const admin = { LIVE_MEM_AUTH: 'required', LIVE_MEM_ADMIN_TOKEN: ADMIN };
    assert.equal((await run(['--token', ADMIN, 'space', 'create', 'proj'], admin)).exitCode, 0);
    const created = await run(['--token', ADMIN, 'token', 'create', 'reviewer', '-p', 'read', '-s', '*', '--json'], admin);
    readToken = JSON.parse(created.stdout).token;
    await writeFile(path.join(home.dir, 'junk.tar.gz'), 'this is not an archive');
  });
  after(async () => home?.remove());

  it('a missing file: said as a person would, exit 1', async () => {
    await fails(['import', 'no-such.tar.gz'], 1, /^live-mem: no such file: no-such\.tar\.gz\n$/);
    await fails(['space', 'create', 'x', '--rules-file', 'nope.md'], 1, /^live-mem: no such file: nope\.md\n$/);
    await fails(['export', 'proj', '-o', 'no/such/folder/p.tar.gz'], 1, /^live-mem: no such folder: .*no\/such\/folder\n$/);
  });

  it('an unknown space: exit 1', async () => {
    await fails(['read', 'ghost'], 1, /^live-mem: space 'ghost' does not exist\n$/);
  });

  it('a bad flag, a missing argument, an unknown command: exit 2 with the help to see', async () => {
    await fails(['read', 'proj', '--bogus'], 2, /^live-mem: unknown option '--bogus' \(see `live-mem read --help`\)\n$/);
    await fails(['space', 'info'], 2, /^live-mem: missing required argument 'space_id' \(see `live-mem space info --help`\)\n$/);
    await fails(['frob'], 2, /^live-mem: unknown command 'frob' \(see `live-mem --help`\)\n$/);
    await fails(['read', 'proj', '--limit', 'many'], 2, /argument 'many' is invalid/);
    await fails(['read', 'proj', '--limit', '0'], 2, /^live-mem: limit must be an integer from 1 to 1000/);
  });

  it('a bad configuration value or file: exit 2', async () => {
    await fails(['space', 'list'], 2, /^live-mem: LIVE_MEM_MAX_NOTE_CHARS must be an integer/, { LIVE_MEM_MAX_NOTE_CHARS: 'lots' });
    await writeFile(path.join(home.dir, 'bad.yaml'), 'storage: fs\nagent: a: b\n');
    await fails(['--config', 'bad.yaml', 'space', 'list'], 2, /^live-mem: cannot read .*bad\.yaml: .*line 2/);
    await fails(['--config', 'absent.yaml', 'space', 'list'], 2, /^live-mem: config file not found/);
  });

  it('a permission refused to a read token: exit 1', async () => {
    const env = { LIVE_MEM_AUTH: 'required', LIVE_MEM_TOKEN: readToken };
    await fails(['note', 'proj', 'hello'], 1, /^live-mem: this caller lacks the 'write' permission\n$/, env);
    await fails(['doctor', '--fix'], 1, /^live-mem: this caller lacks the 'admin' permission\n$/, env);
    await fails(['space', 'list'], 1, /^live-mem: /, { LIVE_MEM_AUTH: 'required' });
  });

  it('an invalid archive: refused before anything is written, exit 2', async () => {
    await fails(['import', 'junk.tar.gz'], 2, /^live-mem: cannot read the archive: /);
    await fails(['import', '.'], 2, /^live-mem: \. is not a file/);
  });

  it('a store that cannot be reached (the S3 client failing): one line, exit 1', async () => {
    const s3 = {
      LIVE_MEM_STORAGE: 's3',
      LIVE_MEM_S3_ENDPOINT: 'http://127.0.0.1:1',
      LIVE_MEM_S3_BUCKET: 'nowhere',
      LIVE_MEM_S3_ACCESS_KEY_ID: 'a',
      LIVE_MEM_S3_SECRET_ACCESS_KEY: 'b',
    };
    await fails(['space', 'list'], 1, /^live-mem: S3 list failed for s3:\/\/nowhere\/: cannot reach S3 endpoint http:\/\/127\.0\.0\.1:1/, s3);
  });

  it('with --json: the error as JSON on stdout, nothing on stderr', async () => {
    const missing = await run(['import', 'no-such.tar.gz', '--json']);
    assert.equal(missing.exitCode, 1);
    assert.equal(missing.stderr, '');
    assert.deepEqual(JSON.parse(missing.stdout), {
      status: 'error',
      code: 'system_error',
      message: 'no such file: no-such.tar.gz',
      errno: 'ENOENT',
      path: 'no-such.tar.gz',
    });
    const flag = await run(['read', 'proj', '--bogus', '--json']);
    assert.equal(flag.exitCode, 2);
    assert.equal(JSON.parse(flag.stdout).code, 'invalid_input');
  });

  it('with LIVE_MEM_LOG_LEVEL=debug, the stack follows the line', async () => {
    const missing = await run(['import', 'no-such.tar.gz'], { LIVE_MEM_LOG_LEVEL: 'debug' });
    assert.equal(missing.exitCode, 1);
    assert.match(missing.stderr, /^live-mem: no such file: no-such\.tar\.gz\n/);
    assert.match(missing.stderr, /ENOENT[^\n]*\n\s+at /);
    const domain = await run(['read', 'ghost'], { LIVE_MEM_LOG_LEVEL: 'debug' });
    assert.match(domain.stderr, /LiveMemError: space 'ghost' does not exist\n\s+at /);
  });
});
