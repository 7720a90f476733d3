/**
 * The store's text is untrusted, and a terminal obeys escape sequences: the CLI's human output
 * shows them as visible characters (a window title, a clipboard write, a screen clear, a C1 CSI, a
 * bidi override never reach the terminal raw), while --json carries the exact text. As processes.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const TITLE = '\x1b]0;pwned\x07';
const CLIPBOARD = '\x1b]52;c;ZXZpbA==\x07';
const CLEAR = '\x1b[2J\x1b[H';
const C1 = '\x9b31m';
const BIDI = '\u202eevil\u202c \u2066x\u2069';
const HOSTILE = `${TITLE}${CLIPBOARD}${CLEAR}${C1} carriage\rreturn ${BIDI}`;

/** Raw control bytes and bidi controls a terminal would act on (newline and tab are fine). */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe('CLI human output: escape sequences from the store are made visible', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  const run = (args: string[], input?: string) =>
    execa(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell' },
      extendEnv: false,
      reject: false,
      ...(input !== undefined ? { input } : {}),
    });

  before(async () => {
    home = await tempDir();
    const created = await run(['space', 'create', 'evil', '-d', `desc ${HOSTILE}`, '--rules', `# Rules\n${HOSTILE}\n`]);
    assert.equal(created.exitCode, 0, created.stderr);
    const noted = await run(['note', 'evil', '-c', 'issue', '-t', `tag${TITLE}`, '-'], `note ${HOSTILE}`);
    assert.equal(noted.exitCode, 0, noted.stderr);
    const bank = path.join(home.dir, 'evil', 'bank');
    await mkdir(bank, { recursive: true });
    await writeFile(path.join(bank, 'activeContext.md'), `# Context\n${HOSTILE}\n`);
  });
  after(async () => home?.remove());

  const commands: string[][] = [
    ['read', 'evil'],
    ['search', 'evil', 'note'],
    ['space', 'list'],
    ['space', 'info', 'evil'],
    ['space', 'rules', 'evil'],
    ['space', 'summary', 'evil'],
    ['bank', 'list', 'evil'],
    ['bank', 'read', 'evil', 'activeContext.md'],
    ['bank', 'read-all', 'evil'],
    ['recall', 'evil', 'note'],
  ];

  for (const args of commands) {
    it(`${args.join(' ')}: no raw control character on stdout or stderr`, async () => {
      const result = await run(args);
      assert.equal(result.exitCode, 0, result.stderr);
      assert.doesNotMatch(result.stdout, RAW, JSON.stringify(result.stdout));
      assert.doesNotMatch(result.stderr, RAW, JSON.stringify(result.stderr));
    });
  }

  it('shows what was there: ␛ for ESC, ␇ for BEL, ␍ for CR, \\u escapes for C1 and bidi controls', async () => {
    const result = await run(['read', 'evil']);
    assert.ok(result.stdout.includes('␛]0;pwned␇␛]52;c;ZXZpbA==␇␛[2J␛[H\\u009b31m carriage␍return \\u202eevil\\u202c \\u2066x\\u2069'), result.stdout);
    assert.ok(result.stdout.includes('#tag␛]0;pwned␇'), 'the tag too');
  });

  it('an error message quoting hostile input is made visible too', async () => {
    const result = await run(['bank', 'read', 'evil', `x${CLEAR}.md`]);
    assert.notEqual(result.exitCode, 0);
    assert.doesNotMatch(result.stderr, RAW, JSON.stringify(result.stderr));
  });

  it('--json carries the exact text, every control character escaped the JSON way', async () => {
    const json = (await run(['read', 'evil', '--json'])).stdout;
    assert.doesNotMatch(json, RAW, 'C1 and bidi controls too, which JSON.stringify leaves raw');
    const notes = JSON.parse(json) as { notes: Array<{ content: string; tags: string[] }> };
    assert.equal(notes.notes[0]?.content, `note ${HOSTILE}`);
    assert.deepEqual(notes.notes[0]?.tags, [`tag${TITLE}`]);
    const info = JSON.parse((await run(['space', 'info', 'evil', '--json'])).stdout) as { description: string };
    assert.equal(info.description, `desc ${HOSTILE}`);
    const bank = JSON.parse((await run(['bank', 'read', 'evil', 'activeContext.md', '--json'])).stdout) as { content: string };
    assert.equal(bank.content, `# Context\n${HOSTILE}\n`);
  });
});
