/**
 * How the CLI takes a secret: `--token <secret>` works but warns (every local user reads a
 * process's arguments with `ps`); LIVE_MEM_TOKEN and `--token-file` work without a word, and a
 * token file others can read is warned about. Run as processes on a store where auth is required.
 */
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const ADMIN = 'admin-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const PS_WARNING = 'live-mem: warning: --token puts the secret in the process list (ps): use LIVE_MEM_TOKEN or --token-file\n';

describe('CLI secrets: out of the process list', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let reader: string;
  const run = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      cwd: home.dir,
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_AUTH: 'required', LIVE_MEM_ADMIN_TOKEN: ADMIN, ...env },
      extendEnv: false,
      reject: false,
    });

  before(async () => {
    home = await tempDir();
    assert.equal((await run(['space', 'create', 'proj'], { LIVE_MEM_TOKEN: ADMIN })).exitCode, 0);
    const created = await run(['token', 'create', 'reader', '-p', 'read', '-s', 'proj', '--json'], { LIVE_MEM_TOKEN: ADMIN });
    reader = JSON.parse(created.stdout).token;
  });
  after(async () => home?.remove());

  it('--token works, and warns on stderr that ps shows it', async () => {
    const result = await run(['--token', reader, 'whoami']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /agent: reader/);
    assert.equal(result.stderr, PS_WARNING.trimEnd());
    assert.ok(!result.stderr.includes(reader), 'the warning does not repeat the secret');
  });

  it('LIVE_MEM_TOKEN works without a warning', async () => {
    const result = await run(['whoami'], { LIVE_MEM_TOKEN: reader });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /agent: reader/);
    assert.equal(result.stderr, '');
  });

  it('--token-file reads the token (newline trimmed) without a warning when only its owner can read it', async () => {
    const file = path.join(home.dir, 'reader.token');
    await writeFile(file, `${reader}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    const result = await run(['--token-file', file, 'whoami']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /agent: reader/);
    assert.equal(result.stderr, '');
    const denied = await run(['--token-file', file, 'space', 'create', 'other']);
    assert.equal(denied.exitCode, 1, 'the token of the file is the caller: read only');
  });

  it('--token-file warns when others can read the file, and refuses a missing or empty file or both flags (exit 2)', async () => {
    const shared = path.join(home.dir, 'shared.token');
    await writeFile(shared, reader);
    await chmod(shared, 0o644);
    const warned = await run(['--token-file', shared, 'whoami']);
    assert.equal(warned.exitCode, 0, warned.stderr);
    assert.match(warned.stderr, /^live-mem: warning: --token-file .*shared\.token is readable by other users \(mode 644\): chmod 600 /);

    const missing = await run(['--token-file', path.join(home.dir, 'nope.token'), 'whoami']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /^live-mem: --token-file .*nope\.token: no such file\n?$/);
    const empty = path.join(home.dir, 'empty.token');
    await writeFile(empty, '\n', { mode: 0o600 });
    assert.match((await run(['--token-file', empty, 'whoami'])).stderr, /is empty/);
    const both = await run(['--token', reader, '--token-file', shared, 'whoami']);
    assert.equal(both.exitCode, 2);
    assert.match(both.stderr, /give --token or --token-file, not both/);
  });
});
