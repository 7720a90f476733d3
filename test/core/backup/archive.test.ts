import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import { craftTar, craftTarGz, validSpaceEntries, type CraftedEntry } from '../../helpers/craft-archive.js';
import { owner } from '../../helpers/core.js';

async function importBytes(bytes: Buffer, as?: string) {
  const storage = createMemoryDriver();
  const core = createCore({ storage });
  const open = async function* () {
    for (let i = 0; i < bytes.length; i += 1000) yield bytes.subarray(i, i + 1000);
  };
  try {
    return { result: await core.backups.importArchive(owner, open, as ? { as } : {}), storage, error: undefined };
  } catch (error) {
    return { result: undefined, storage, error };
  }
}

const extra = (entry: CraftedEntry) => {
  const entries = validSpaceEntries();
  entries.splice(1, 0, entry);
  return entries;
};

describe('importing an archive', () => {
  it('imports a valid archive, gzipped or not', async () => {
    for (const bytes of [craftTarGz(validSpaceEntries()), craftTar(validSpaceEntries())]) {
      const { result, storage, error } = await importBytes(bytes);
      assert.equal(error, undefined, String(error));
      assert.equal(result?.files_restored, 3);
      assert.deepEqual(await listKeys(storage, ''), ['crafted/_meta.json', 'crafted/_rules.md', 'crafted/live/20260101T000000_a_todo_00aaaaaa.md']);
    }
  });

  const bad: Array<[string, Buffer, RegExp]> = [
    ['a ../ entry', craftTarGz(extra({ path: 'crafted/../../etc/evil.md', body: 'x' })), /escape/],
    ['an absolute path', craftTarGz(extra({ path: '/etc/evil.md', body: 'x' })), /escape/],
    ['a symlink', craftTarGz(extra({ path: 'crafted/bank/link.md', type: 'SymbolicLink', linkpath: '/etc/passwd' })), /SymbolicLink entry/],
    ['a hard link', craftTarGz(extra({ path: 'crafted/bank/hard.md', type: 'Link', linkpath: 'crafted/_rules.md' })), /Link entry/],
    ['a character device', craftTarGz(extra({ path: 'crafted/dev', type: 'CharacterDevice' })), /CharacterDevice entry/],
    ['a FIFO', craftTarGz(extra({ path: 'crafted/fifo', type: 'FIFO' })), /FIFO entry/],
    ['a backslash path', craftTarGz(extra({ path: 'crafted\\..\\evil.md', body: 'x' })), /escape/],
    ['a file outside the space', craftTarGz(extra({ path: 'other/x.md', body: 'x' })), /outside space 'crafted'/],
    ['a file not in the manifest', craftTarGz(extra({ path: 'crafted/bank/extra.md', body: 'x' })), /does not list/],
    [
      'a checksum mismatch',
      craftTarGz(
        validSpaceEntries('crafted', (files) => {
          (files[1] as { body: string }).body = '# Rules\n';
          return undefined;
        }).map((e) => (e.path === 'crafted/_rules.md' ? { ...e, body: '# Tampered\n' } : e)),
      ),
      /checksum mismatch for _rules\.md/,
    ],
    [
      'an unknown format version',
      craftTarGz(validSpaceEntries('crafted', (_files, manifest) => void (manifest.format_version = 99))),
      /unknown format version 99/,
    ],
    ['no manifest', craftTarGz(validSpaceEntries().filter((e) => e.path !== 'manifest.json')), /no manifest\.json/],
    ['a truncated gzip', craftTarGz(validSpaceEntries()).subarray(0, 120), /corrupt or cut short|no manifest/],
    ['bytes that are not an archive', Buffer.from('PK\u0003\u0004 this is a zip, not a tar.gz '.repeat(40)), /not a tar\.gz archive|cannot read the archive/],
    ['an empty file', Buffer.alloc(0), /not a tar\.gz archive/],
  ];
  for (const [name, bytes, message] of bad) {
    it(`refuses ${name}, writing nothing`, async () => {
      const { error, storage } = await importBytes(bytes);
      assert.ok(isLiveMemError(error, 'invalid_input'), `expected invalid_input, got ${String(error)}`);
      assert.match((error as Error).message, message);
      assert.deepEqual(await listKeys(storage, ''), []);
    });
  }

  it('imports under another name, rewriting the meta', async () => {
    const { result, storage } = await importBytes(craftTarGz(validSpaceEntries()), 'renamed');
    assert.equal(result?.space_id, 'renamed');
    assert.equal(JSON.parse((await storage.get('renamed/_meta.json'))!.body.toString()).space_id, 'renamed');
    const { error } = await importBytes(craftTarGz(validSpaceEntries()), '../x');
    assert.ok(isLiveMemError(error, 'invalid_input'));
  });
});
