import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Header } from 'tar';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import type { Limits } from '../../../src/core/context.js';
import { craftTar, craftTarGz, validSpaceEntries, type CraftedEntry } from '../../helpers/craft-archive.js';
import { owner } from '../../helpers/core.js';

async function importBytes(bytes: Buffer, as?: string, options: { storage?: StorageDriver; limits?: Partial<Limits> } = {}) {
  const storage = options.storage ?? createMemoryDriver();
  const core = createCore({ storage, ...(options.limits ? { limits: options.limits } : {}) });
  const open = async function* () {
    for (let i = 0; i < bytes.length; i += 1000) yield bytes.subarray(i, i + 1000);
  };
  try {
    return { result: await core.backups.importArchive(owner, open, as ? { as } : {}), storage, error: undefined };
  } catch (error) {
    return { result: undefined, storage, error };
  }
}

/** A valid archive of space 'crafted' with `files` added, listed in its manifest with the right checksums. */
const withFiles = (...files: Array<{ path: string; body: string }>): Buffer => craftTarGz(validSpaceEntries('crafted', (all) => void all.push(...files)));
/** The same with `_meta.json` replaced by `meta`. */
const withMeta = (meta: string): Buffer =>
  craftTarGz(
    validSpaceEntries('crafted', (all) => {
      (all[0] as { body: string }).body = meta;
    }),
  );

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

describe("an archive holds a space's content and nothing else", () => {
  const lease = (owner: string) => JSON.stringify({ owner, token: 'x', acquired_at: '2026-01-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z' });
  const pending = JSON.stringify({
    id: '20260101T000000-aaaaaa',
    space_id: 'victim',
    committed_at: '2026-01-01T00:00:00Z',
    notes: [],
    time_range: { oldest: null, newest: null },
    writes: [{ filename: 'planted.md', content: 'planted', expectedEtag: null, kind: 'created' }],
    synthesis: { content: 'planted', expectedEtag: null },
    metrics: {},
  });
  const refused: Array<[string, Buffer, RegExp]> = [
    [
      'a pending commit naming another space',
      withFiles({ path: '_consolidation/pending.json', body: pending }),
      /invalid archive: "crafted\/_consolidation\/pending\.json" is internal state \(a pending consolidation commit\): live-mem exports and backups never carry it/,
    ],
    [
      'a consolidation lease held until 2099',
      withFiles({ path: '_consolidation/lock.json', body: lease('x') }),
      /"crafted\/_consolidation\/lock\.json" is internal state \(a consolidation lease\)/,
    ],
    [
      'a summaries lease held until 2099',
      withFiles({ path: '_summaries/lock.json', body: lease('x') }),
      /"crafted\/_summaries\/lock\.json" is internal state \(a summaries lease\)/,
    ],
    ['a job record', withFiles({ path: '_consolidation/jobs/j1.json', body: '{}' }), /internal state \(a background job record\)/],
    [
      'an index snapshot',
      withFiles({ path: '_index/bm25-v1.json', body: '{}' }),
      /"crafted\/_index\/bm25-v1\.json" is internal state \(a search index snapshot\)/,
    ],
    ['a temp file', withFiles({ path: 'live/20260101T000000_a_todo_00bbbbbb.md.x1.lmtmp', body: 'x' }), /is internal state \(a temp file\)/],
    ['a bank file in a folder', withFiles({ path: 'bank/sub/file.md', body: 'x' }), /"crafted\/bank\/sub\/file\.md" is not a bank file/],
    ['a bank file named with ..', withFiles({ path: 'bank/..evil.md', body: 'x' }), /"crafted\/bank\/\.\.evil\.md" is not a bank file/],
    ['a bank file that is not Markdown', withFiles({ path: 'bank/run.sh', body: 'x' }), /is not a bank file/],
    ['a live file that is no note', withFiles({ path: 'live/readme.txt', body: 'x' }), /"crafted\/live\/readme\.txt" is not a live note/],
    ['a file outside the layout', withFiles({ path: 'notes.txt', body: 'x' }), /"crafted\/notes\.txt" is not part of a space/],
    ['a _system file inside the space', withFiles({ path: '_system/tokens.json', body: '{}' }), /is not part of a space/],
    ['a history file of another name', withFiles({ path: 'history/20260101T000000-aaaaaa/evil.sh', body: 'x' }), /is not part of a space/],
    ['a _meta.json that is not JSON', withMeta('{"space_id": "crafted", garbage'), /invalid archive: _meta\.json is not JSON/],
    ['a _meta.json that is an array', withMeta('[1, 2]'), /invalid archive: _meta\.json is not a JSON object/],
    ['a _meta.json that is null', withMeta('null'), /invalid archive: _meta\.json is not a JSON object/],
  ];
  for (const [name, bytes, message] of refused) {
    it(`refuses ${name}, writing nothing`, async () => {
      const { error, storage } = await importBytes(bytes);
      assert.ok(isLiveMemError(error, 'invalid_input'), `expected invalid_input, got ${String(error)}`);
      assert.match((error as Error).message, message);
      assert.deepEqual(await listKeys(storage, ''), []);
    });
  }

  it('refuses a pending commit naming another space, and that space is left as it was', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'victim' });
    const before = await listKeys(storage, '');
    const { error } = await importBytes(withFiles({ path: '_consolidation/pending.json', body: pending }), undefined, { storage });
    assert.ok(isLiveMemError(error, 'invalid_input'), String(error));
    await assert.rejects(core.backups.exportStream(owner, 'crafted'), (e) => isLiveMemError(e, 'not_found'));
    assert.deepEqual(await listKeys(storage, ''), before);
  });

  it('imports every kind of content: synthesis, .keep sentinels, bank, history (compaction pre-images included), summaries', async () => {
    const files = [
      { path: '_synthesis.md', body: '# Synthesis\n' },
      { path: '.keep', body: '' },
      { path: 'live/.keep', body: '' },
      { path: 'bank/.keep', body: '' },
      { path: 'bank/activeContext.md', body: '# Active\n' },
      { path: 'history/20260101T000000-aaaaaa/record.json', body: '{}' },
      { path: 'history/20260101T000000-aaaaaa/notes.json', body: '{}' },
      { path: 'history/20260102T000000-bbbbbb/record.json', body: '{"kind":"compaction"}' },
      { path: 'history/20260102T000000-bbbbbb/preimages.json', body: '{"version":1,"sections":[]}' },
      { path: '_summaries/L1/L1-20260101T000000-00aaaaaa.json', body: '{}' },
    ];
    const { result, storage, error } = await importBytes(withFiles(...files));
    assert.equal(error, undefined, String(error));
    assert.equal(result?.files_restored, 3 + files.length);
    for (const { path } of files) assert.ok(await storage.get(`crafted/${path}`), path);
  });
});

describe('the second pass over an archive', () => {
  it('writes only what the first pass verified: an archive swapped in between is refused, nothing left', async () => {
    const good = craftTarGz(validSpaceEntries());
    const swaps: Array<[string, Buffer]> = [
      ['internal state', withFiles({ path: '_consolidation/pending.json', body: '{"space_id":"victim"}' })],
      ['another body', craftTarGz(validSpaceEntries().map((e) => (e.path === 'crafted/_rules.md' ? { ...e, body: '# Swapped\n' } : e)))],
      ['fewer files', craftTarGz(validSpaceEntries().filter((e) => !e.path.includes('/live/')))],
    ];
    for (const [name, swapped] of swaps) {
      const storage = createMemoryDriver();
      const core = createCore({ storage });
      let opened = 0;
      const open = async function* () {
        yield opened++ === 0 ? good : swapped;
      };
      await assert.rejects(
        core.backups.importArchive(owner, open),
        (e) => isLiveMemError(e, 'invalid_input') && /the archive changed while it was imported/.test((e as Error).message),
        name,
      );
      assert.equal(opened, 2, name);
      assert.deepEqual(await listKeys(storage, ''), [], name);
    }
  });
});

describe('import caps', () => {
  const big = (size: number) => withFiles({ path: 'history/20260101T000000-aaaaaa/notes.json', body: 'x'.repeat(size) });

  it('refuses an entry larger than importMaxEntryBytes, naming it, its size and the setting', async () => {
    const { error, storage } = await importBytes(big(5_000), undefined, { limits: { importMaxEntryBytes: 4_000 } });
    assert.ok(isLiveMemError(error, 'invalid_input'), String(error));
    assert.match(
      (error as Error).message,
      /invalid archive: "crafted\/history\/20260101T000000-aaaaaa\/notes\.json" holds 5000 bytes, more than the 4000 an entry may hold: raise LIVE_MEM_IMPORT_MAX_ENTRY_BYTES/,
    );
    assert.deepEqual(await listKeys(storage, ''), []);
    const { error: fits } = await importBytes(big(4_000), undefined, { limits: { importMaxEntryBytes: 4_000 } });
    assert.equal(fits, undefined, String(fits));
  });

  it('refuses an archive larger in all than importMaxBytes, naming the entry that passes it and the setting', async () => {
    const { error, storage } = await importBytes(big(5_000), undefined, { limits: { importMaxBytes: 5_200 } });
    assert.ok(isLiveMemError(error, 'invalid_input'), String(error));
    assert.match(
      (error as Error).message,
      /more than 5200 bytes once uncompressed \(reached at "crafted\/history\/.*notes\.json"\): raise LIVE_MEM_IMPORT_MAX_BYTES/,
    );
    assert.deepEqual(await listKeys(storage, ''), []);
  });

  it('refuses an entry on the size its header claims, before reading it', async () => {
    // A header claiming 2 GiB followed by one block: refused at the header, not read until cut short.
    const header = new Header({ path: 'crafted/bank/big.md', mode: 0o644, size: 2 ** 31, mtime: new Date(0), type: 'File' });
    header.encode();
    const bytes = Buffer.concat([craftTar(validSpaceEntries().slice(0, 1)).subarray(0, -1024), header.block as Buffer, Buffer.alloc(512)]);
    const { error } = await importBytes(bytes);
    assert.ok(isLiveMemError(error, 'invalid_input'), String(error));
    assert.match((error as Error).message, /"crafted\/bank\/big\.md" holds 2147483648 bytes, more than the 256000000 an entry may hold/);
  });
});
