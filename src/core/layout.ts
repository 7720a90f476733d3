/**
 * The store layout, in one place. It is the Python Live Memory server's bucket layout, so live-mem
 * opens its buckets as they are:
 *
 *   {space}/_meta.json        space metadata
 *   {space}/_rules.md         the rules (structure of the bank)
 *   {space}/_synthesis.md     the cumulative synthesis
 *   {space}/live/{note}.md    live notes, {YYYYMMDDTHHMMSS}_{agent}_{category}_{id8}.md
 *   {space}/bank/{file}.md    the memory bank
 *   _system/…                 store-wide state
 */
export const SYSTEM_PREFIX = '_system/';
/** Folder sentinels the Python server created; never listed as notes or bank files. */
export const KEEP_FILE = '.keep';

export function spaceKeys(spaceId: string) {
  const root = `${spaceId}/`;
  return {
    root,
    meta: `${root}_meta.json`,
    rules: `${root}_rules.md`,
    synthesis: `${root}_synthesis.md`,
    live: `${root}live/`,
    bank: `${root}bank/`,
    note: (filename: string) => `${root}live/${filename}`,
    bankFile: (filename: string) => `${root}bank/${filename}`,
  };
}

/** The last path segment of a key. */
export const baseName = (key: string): string => key.slice(key.lastIndexOf('/') + 1);
