import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backupKeys, spaceKeys } from '../../src/core/layout.js';
import { foldedBankName, validateBankFilename } from '../../src/core/validate.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { MAX_KEY_BYTES, MAX_NAME_BYTES, normalizeKey, utf8Bytes } from '../../src/shared/keys.js';

const refused = (name: string) =>
  assert.throws(
    () => validateBankFilename(name),
    (e) => isLiveMemError(e, 'invalid_input'),
    JSON.stringify(name),
  );

describe('bank file names', () => {
  it('accepts plain names, in NFC', () => {
    for (const name of ['progress.md', 'tech-context.md', 'Décisions 2026.md', 'console.md', 'com10.md', 'nul-hypothesis.md']) {
      assert.equal(validateBankFilename(name), name);
    }
    assert.equal(validateBankFilename('cafe\u0301.md'), 'caf\u00e9.md');
    assert.equal(foldedBankName('Cafe\u0301.MD'), foldedBankName('caf\u00e9.md'));
  });

  it('counts bytes, not characters, and leaves room for the temp names', () => {
    const longest = `${'a'.repeat(MAX_NAME_BYTES - 3)}.md`;
    assert.equal(validateBankFilename(longest), longest);
    refused(`${'a'.repeat(MAX_NAME_BYTES - 2)}.md`);
    refused(`${'a'.repeat(252)}.md`);
    refused(`${'é'.repeat(130)}.md`);
    refused(`${'e\u0301'.repeat(107)}.md`); // 107 × é in NFC: 217 bytes
    assert.equal(validateBankFilename(`${'e\u0301'.repeat(106)}.md`), `${'é'.repeat(106)}.md`);
  });

  it('refuses what Windows cannot hold', () => {
    for (const name of ['CON.md', 'con.md', 'Prn.md', 'AUX.md', 'NUL.md', 'COM1.md', 'com9.notes.md', 'LPT1.md', 'lpt9.md', 'COM\u00b9.md']) refused(name);
    for (const name of ['x:y.md', 'a<b.md', 'a>b.md', 'a"b.md', 'a|b.md', 'a?.md', 'a*.md', 'a\\b.md', 'a/b.md', 'a\u0001.md']) refused(name);
    for (const name of ['.md', 'x.md.', 'x.md ', 'notes.txt', '../x.md', 'x\u200b.md']) refused(name);
  });

  it('keeps every key holding a bank file within S3 limits, its backup copy included', () => {
    const space = 'a'.repeat(64);
    const name = `${'é'.repeat((MAX_NAME_BYTES - 3) / 2)}.md`;
    const longestStamp = `${'2026-02-20T18-00-00'}-${'z'.repeat(21)}`;
    for (const key of [spaceKeys(space).bankFile(name), backupKeys(space, longestStamp).file(`bank/${name}`)]) {
      assert.ok(utf8Bytes(key) < MAX_KEY_BYTES, key);
      assert.equal(normalizeKey(key), key);
    }
    assert.throws(() => normalizeKey(`s/${'é'.repeat(512)}`), /longer than 1024 bytes/);
  });
});
