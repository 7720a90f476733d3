import { mapLimit } from '../../shared/concurrency.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import type { ObjectInfo } from '../../storage/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { baseName, KEEP_FILE, spaceKeys } from '../layout.js';
import { requireSpace } from '../space/meta.js';
import { isStoredBankFilename, quoteName, validateSpaceId } from '../validate.js';

export interface BankFileInfo {
  filename: string;
  size: number;
  last_modified: string;
}

export interface BankFile {
  filename: string;
  content: string;
  size: number;
}

/** The memory bank: read-only for agents; only consolidation and compaction write it. */
export function createBankService(context: CoreContext) {
  const { storage, limits } = context;

  /** The bank's files, by name, with sizes (S3 lists them; fs needs a stat per file). */
  const listFiles = async (spaceId: string): Promise<BankFileInfo[]> => {
    const objects: ObjectInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await storage.list(spaceKeys(spaceId).bank, { delimiter: '/', ...(cursor ? { cursor } : {}) });
      objects.push(...page.objects.filter((o) => isBankFileName(baseName(o.key))));
      cursor = page.cursor;
    } while (cursor);
    const files = await mapLimit(objects, storage.parallelism, async (object) => {
      const info = object.size !== undefined && object.lastModified ? object : await storage.stat(object.key);
      return info ? { filename: baseName(object.key), size: info.size ?? 0, last_modified: (info.lastModified ?? new Date(0)).toISOString() } : null;
    });
    return files.filter((file): file is BankFileInfo => file !== null).sort((a, b) => (a.filename < b.filename ? -1 : 1));
  };

  const readAll = async (spaceId: string) => {
    const infos = await listFiles(spaceId);
    const bodies = await mapLimit(infos, storage.parallelism, (info) => storage.get(spaceKeys(spaceId).bankFile(info.filename)));
    const files: BankFile[] = [];
    const omitted: string[] = [];
    let totalSize = 0;
    bodies.forEach((object, index) => {
      const filename = (infos[index] as BankFileInfo).filename;
      if (!object) return;
      if (totalSize + object.size > limits.bankReadAllMaxBytes) {
        omitted.push(filename);
        return;
      }
      totalSize += object.size;
      files.push({ filename, content: object.body.toString('utf8'), size: object.size });
    });
    return {
      files,
      total_size: totalSize,
      file_count: files.length,
      truncated: omitted.length > 0,
      ...(omitted.length > 0 ? { omitted_files: omitted, max_bytes: limits.bankReadAllMaxBytes } : {}),
    };
  };

  return {
    listFiles,
    readAll,

    async list(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      const files = await listFiles(spaceId);
      return { status: 'ok' as const, space_id: spaceId, files, file_count: files.length };
    },

    async read(caller: Caller, input: { space_id: string; filename: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      // Any name a bank may hold is read, not only those a plan may create today (a `CON.md` an older
      // version wrote is still the user's); consolidation writes NFC names, so the NFC form is tried too.
      const given = input.filename;
      if (typeof given !== 'string' || !isBankFileName(given)) {
        throw invalid(`invalid bank filename ${quoteName(given)}: use a plain name ending in .md, without folders or '..'`);
      }
      await requireSpace(context, spaceId);
      const nfc = given.normalize('NFC');
      const object = (await storage.get(spaceKeys(spaceId).bankFile(nfc))) ?? (nfc !== given ? await storage.get(spaceKeys(spaceId).bankFile(given)) : null);
      const filename = object ? baseName(object.key) : nfc;
      if (!object) throw new LiveMemError('not_found', `bank file '${filename}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename });
      return {
        status: 'ok' as const,
        space_id: spaceId,
        filename,
        content: object.body.toString('utf8'),
        size: object.size,
        last_modified: object.lastModified.toISOString(),
      };
    },

    async readAllFor(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      return { status: 'ok' as const, space_id: spaceId, ...(await readAll(spaceId)) };
    },
  };
}

export type BankService = ReturnType<typeof createBankService>;

const isBankFileName = (name: string): boolean => name !== KEEP_FILE && isStoredBankFilename(name);
