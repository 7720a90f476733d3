import { createHash } from 'node:crypto';
import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { CoreContext } from '../context.js';
import { baseName, spaceKeys } from '../layout.js';
import { isStoredBankFilename } from '../validate.js';

/** A bank file as its writers read it: its text, and the etag a compare-and-swap writes it against. */
export interface BankFileState {
  content: string;
  etag: string;
}

/** Every bank file of a space with the etag it was read at, by name (what consolidation and compaction plan from). */
export async function readBankFiles(context: CoreContext, spaceId: string): Promise<Map<string, BankFileState>> {
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const objects = [];
  for await (const object of listAll(storage, keys.bank, { delimiter: '/' })) if (isStoredBankFilename(baseName(object.key))) objects.push(object);
  const read = await mapLimit(objects, storage.parallelism, (object) => storage.get(object.key));
  const files = new Map<string, BankFileState>();
  for (const object of read) if (object) files.set(baseName(object.key), { content: object.body.toString('utf8'), etag: object.etag });
  return files;
}

/**
 * A text's version, for compare-and-swap by people (bank_read and space_rules give it, bank_write and
 * space_update_rules take it back as `if_match`): the same on every driver and every process, unlike etags.
 */
export const contentVersion = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
