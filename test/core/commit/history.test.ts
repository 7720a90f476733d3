import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeHistoryNotes, encodeHistoryNotes } from '../../../src/core/commit/history.js';
import { isLiveMemError } from '../../../src/shared/errors.js';

describe('history notes', () => {
  it('keep every body byte for byte: text as text, anything else in base64', () => {
    const notes = [
      { filename: 'a.md', body: Buffer.from('---\nagent: "x"\n---\n\nünïcode ✓ 日本語\n') },
      { filename: 'b.md', body: Buffer.from([0xff, 0xfe, 0x00, 0x41]) },
      { filename: 'c.md', body: Buffer.alloc(0) },
    ];
    const encoded = encodeHistoryNotes(notes);
    assert.match(encoded, /"content": "---\\nagent/);
    assert.ok(encoded.includes('"content_base64": "//4AQQ=="'), encoded);
    assert.deepEqual(decodeHistoryNotes(Buffer.from(encoded), 'notes.json'), notes);
  });

  it('refuse a file that is not theirs, with a storage error naming it', () => {
    for (const bad of [
      'not json',
      '{"format":"other","format_version":1,"notes":[]}',
      '{"format":"live-mem-history-notes","format_version":1,"notes":[{"filename":"x.md"}]}',
    ]) {
      assert.throws(
        () => decodeHistoryNotes(Buffer.from(bad), 'proj/history/c1/notes.json'),
        (error) => isLiveMemError(error, 'storage_error') && /proj\/history\/c1\/notes\.json/.test(error.message),
      );
    }
  });
});
