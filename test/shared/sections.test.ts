import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { crc32, crc32Js, DamagedSectionsError, readSections, writeSections } from '../../src/shared/sections.js';

const MAGIC = Buffer.from('TESTSECT', 'latin1');
const text = (name: string, value: string, version = 1) => {
  const bytes = Buffer.from(value);
  return { name, version, bytes: bytes.length, write: (into: Buffer) => bytes.copy(into) };
};

describe('files of sections', () => {
  it('round-trips sections, each 8-byte aligned, with their versions', () => {
    const file = writeSections(MAGIC, 3, [text('a', 'x'), text('bee', 'hello world', 2), text('empty', '')]);
    const { version, sections } = readSections(file, MAGIC);
    assert.equal(version, 3);
    assert.deepEqual(
      [...sections.values()].map((s) => [s.name, s.version, s.bytes.toString(), s.sound(), s.bytes.byteOffset % 8]),
      [
        ['a', 1, 'x', true, 0],
        ['bee', 2, 'hello world', true, 0],
        ['empty', 1, '', true, 0],
      ],
    );
  });

  it('checks each section on its own: a flipped byte condemns its section only', () => {
    const file = writeSections(MAGIC, 1, [text('a', 'first section'), text('b', 'second section')]);
    const b = readSections(file, MAGIC).sections.get('b');
    file[(b?.bytes.byteOffset as number) + 3] = (file[(b?.bytes.byteOffset as number) + 3] as number) ^ 1;
    const { sections } = readSections(file, MAGIC);
    assert.equal(sections.get('a')?.sound(), true);
    assert.equal(sections.get('b')?.sound(), false);
  });

  it('checks a section with block checksums by the blocks a reader uses, each once; without a sound companion, whole', () => {
    const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    const blocked = { name: 'big', version: 1, bytes: bytes.length, write: (into: Buffer) => bytes.copy(into), blocks: 16 };
    const file = writeSections(MAGIC, 1, [text('a', 'first'), blocked, text('z', 'last')]);
    const at = (name: string) => (readSections(file, MAGIC).sections.get(name)?.bytes.byteOffset as number) - file.byteOffset;
    assert.deepEqual([...readSections(file, MAGIC).sections.keys()], ['a', 'big', 'big~crc', 'z'], 'the companion follows its section');
    const sound = readSections(file, MAGIC).sections.get('big');
    assert.equal(sound?.sound(), true, 'its own checksum is still written (older readers check it)');
    assert.equal(sound?.soundAt(0, 100), true);
    const damaged = Buffer.from(file);
    damaged[at('big') + 40] = (damaged[at('big') + 40] as number) ^ 1; // block 2 (bytes 32–47)
    const big = readSections(damaged, MAGIC).sections.get('big');
    assert.equal(big?.soundAt(0, 32), true, 'blocks 0–1 are sound');
    assert.equal(big?.soundAt(48, 100), true, 'blocks 3–6 are sound');
    assert.equal(big?.soundAt(47, 48), false, 'a byte of block 2');
    assert.equal(big?.soundAt(30, 34), false, 'a range across blocks 1 and 2');
    assert.equal(big?.soundAt(40, 40), true, 'an empty range');
    assert.equal(big?.sound(), false);
    // A damaged companion is not trusted: the section is checked whole.
    const companion = Buffer.from(file);
    companion[at('big~crc') + 12] = (companion[at('big~crc') + 12] as number) ^ 1;
    assert.equal(readSections(companion, MAGIC).sections.get('big')?.soundAt(0, 8), true, 'whole and sound');
    companion[at('big') + 90] = (companion[at('big') + 90] as number) ^ 1;
    assert.equal(readSections(companion, MAGIC).sections.get('big')?.soundAt(0, 8), false, 'whole, and damaged elsewhere');
  });

  it('refuses a file that is not whole: magic, size, table', () => {
    const file = writeSections(MAGIC, 1, [text('a', 'some bytes')]);
    const table = Buffer.from(file);
    table[33] = (table[33] as number) ^ 1; // the first entry's name
    const cases = {
      empty: Buffer.alloc(0),
      magic: Buffer.concat([Buffer.from('OTHERMAG'), file.subarray(8)]),
      truncated: file.subarray(0, file.length - 1),
      extended: Buffer.concat([file, Buffer.alloc(8)]),
      table,
    };
    for (const [name, buffer] of Object.entries(cases)) assert.throws(() => readSections(buffer, MAGIC), DamagedSectionsError, name);
  });

  it('lets the owner of a last section write it with room for the rest, and leaves headroom', () => {
    const inner = writeSections(MAGIC, 1, [text('inner', 'nested')], { headroom: 0 });
    const framed = writeSections(MAGIC, 2, [text('header', '{}')], {
      headroom: 16,
      last: { name: 'engine', version: 1, checksum: false, make: (room) => writeSections(MAGIC, 1, [text('inner', 'nested')], { headroom: room }) },
    });
    const { sections } = readSections(framed.subarray(16), MAGIC);
    const engine = sections.get('engine');
    assert.ok(engine?.bytes.equals(inner));
    assert.equal(
      readSections(engine?.bytes as Buffer, MAGIC)
        .sections.get('inner')
        ?.bytes.toString(),
      'nested',
    );
    const unaligned = Buffer.alloc(framed.length - 16 + 1);
    framed.copy(unaligned, 1, 16);
    assert.equal(readSections(unaligned.subarray(1), MAGIC).sections.get('header')?.bytes.toString(), '{}');
  });

  it('computes zlib CRC-32, in JavaScript too', () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from('123456789'), Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37) & 255))]) {
      assert.equal(crc32Js(bytes), crc32(bytes));
      if (typeof zlib.crc32 === 'function') assert.equal(crc32Js(bytes), zlib.crc32(bytes));
    }
    assert.equal(crc32Js(Buffer.from('123456789')), 0xcbf43926);
  });
});
