/**
 * The contract's key order (types.ts): ascending UTF-8 bytes, the order S3 lists in. UTF-8 keeps the
 * order of code points, so that is code point order — which JavaScript's `<` and the default sort
 * (UTF-16 code units) break in one place only: a character beyond U+FFFF, stored as a surrogate pair
 * (0xD800–0xDFFF), sorts below U+E000–U+FFFF there, above in bytes (`b/😀.md` comes after `b/！.md`).
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return inByteOrder(x) - inByteOrder(y);
  }
  return a.length - b.length;
}

/** A UTF-16 code unit moved to its rank in code point order: surrogates above U+E000–U+FFFF, every other unit in place. */
const inByteOrder = (unit: number): number => (unit < 0xd800 ? unit : unit >= 0xe000 ? unit - 0x800 : unit + 0x2000);

/** A unit where the two orders may disagree. */
const WIDE_UNIT = /[\ud800-\uffff]/;

/**
 * Sorts keys in place, in the contract's order. Keys without a unit from U+D800 up (nearly all) sort the
 * same either way, so they take the default sort, which makes no call per comparison.
 */
export function sortKeys(keys: string[]): string[] {
  return keys.some((key) => WIDE_UNIT.test(key)) ? keys.sort(compareKeys) : keys.sort();
}
