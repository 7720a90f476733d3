import { mapLimit } from '../../shared/concurrency.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import type { ObjectInfo, StoredObject } from '../../storage/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { baseName, KEEP_FILE, SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { contentVersion } from './bank-files.js';
import { type BankBudget, bankBudget, type FileBudgetUse, useOfBudget } from './budget.js';
import { parseBankRules, workingFiles } from './rules.js';
import { requireSpace } from '../space-meta.js';
import { isStoredBankFilename, quoteName, validateSpaceId } from '../validate.js';
import { isoSeconds } from '../../shared/time.js';

export interface BankFileInfo {
  filename: string;
  size: number;
  last_modified: string;
}

interface LoadedBank {
  files: Array<BankFileInfo & { content: string }>;
  budget: BankBudget;
}

export interface BankFile {
  filename: string;
  content: string;
  size: number;
}

/** What every session loads first (rules.ts workingFiles): the working files that exist, and the synthesis. */
export interface WorkingSet {
  files: Array<{ filename: string; content: string; appendOnly: boolean }>;
  /** Empty before the first consolidation. */
  synthesis: string;
}

/** The memory bank: read-only for agents; only consolidation and compaction write it. */
export function createBankService(context: CoreContext) {
  const { storage, limits } = context;

  /** The keys of the bank's files (a listing; S3 gives sizes with it, fs does not). */
  const listObjects = async (spaceId: string): Promise<ObjectInfo[]> => {
    const objects: ObjectInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await storage.list(spaceKeys(spaceId).bank, { delimiter: '/', ...(cursor ? { cursor } : {}) });
      objects.push(...page.objects.filter((o) => isBankFileName(baseName(o.key))));
      cursor = page.cursor;
    } while (cursor);
    return objects.sort((a, b) => (a.key < b.key ? -1 : 1));
  };

  /** The bank's files, by name, with sizes (S3 lists them; fs needs a stat per file). */
  const listFiles = async (spaceId: string): Promise<BankFileInfo[]> => {
    const files = await mapLimit(await listObjects(spaceId), storage.parallelism, async (object) => {
      const info = object.size !== undefined && object.lastModified ? object : await storage.stat(object.key);
      return info ? { filename: baseName(object.key), size: info.size ?? 0, last_modified: isoSeconds(info.lastModified ?? new Date(0)) } : null;
    });
    return files.filter((file): file is BankFileInfo => file !== null);
  };

  /**
   * The bank's files with their text, and the budgets the rules and settings give them: read once,
   * for what is derived from it (the listing with sizes against budgets, bank_read_all). Reading is
   * bounded by the bank's cap on files, and a space loaded at start-up reads it all anyway.
   */
  const load = async (spaceId: string): Promise<LoadedBank> => {
    const keys = spaceKeys(spaceId);
    const [objects, rules] = await Promise.all([listObjects(spaceId), storage.get(keys.rules)]);
    const bodies = await mapLimit(objects, storage.parallelism, (object) => storage.get(object.key));
    const files = bodies.flatMap((object) =>
      object
        ? [{ filename: baseName(object.key), size: object.size, last_modified: isoSeconds(object.lastModified), content: object.body.toString('utf8') }]
        : [],
    );
    return { files, budget: bankBudget(parseBankRules(rules?.body.toString('utf8') ?? ''), context.budgets) };
  };

  /** Each file's size, in bytes and in tokens, against its budget; the bank's against its own. */
  const measured = ({ files, budget }: LoadedBank) => {
    const use = useOfBudget(files, budget);
    return {
      files: files.map(({ content: _, ...info }, index) => ({ ...info, ...(use.files[index] as FileBudgetUse) })),
      total_tokens: use.total_tokens,
      budget_tokens: use.budget_tokens,
      over_budget: use.over_budget,
    };
  };

  const readAllOf = ({ files: loaded }: LoadedBank) => {
    const files: BankFile[] = [];
    const omitted: string[] = [];
    let totalSize = 0;
    for (const { filename, content, size } of loaded) {
      if (totalSize + size > limits.bankReadAllMaxBytes) {
        omitted.push(filename);
        continue;
      }
      totalSize += size;
      files.push({ filename, content, size });
    }
    return {
      files,
      total_size: totalSize,
      file_count: files.length,
      truncated: omitted.length > 0,
      ...(omitted.length > 0 ? { omitted_files: omitted, max_bytes: limits.bankReadAllMaxBytes } : {}),
    };
  };

  /** The bank measured against its budgets (space_info's bank block). */
  const measure = async (spaceId: string) => measured(await load(spaceId));

  /** The whole bank as bank_read_all returns it, and measured, from one read (space_summary). */
  const readAll = async (spaceId: string) => {
    const loaded = await load(spaceId);
    return { read: readAllOf(loaded), measured: measured(loaded) };
  };

  /** The working files the rules name, in their order, and the synthesis: a few reads, not the whole bank. */
  const working = async (spaceId: string): Promise<WorkingSet> => {
    const keys = spaceKeys(spaceId);
    const [rulesObject, synthesis] = await Promise.all([storage.get(keys.rules), storage.get(keys.synthesis)]);
    const rules = parseBankRules(rulesObject?.body.toString('utf8') ?? '');
    const names = workingFiles(rules).filter(isStoredBankFilename);
    const bodies = await mapLimit(names, storage.parallelism, (filename) => storage.get(keys.bankFile(filename)));
    const files = names.flatMap((filename, i) => {
      const body = bodies[i];
      return body ? [{ filename, content: body.body.toString('utf8'), appendOnly: rules.appendOnly.has(filename) }] : [];
    });
    return { files, synthesis: synthesis?.body.toString('utf8') ?? '' };
  };

  return {
    listFiles,
    measure,
    readAll,
    working,

    async list(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      const bank = await measure(spaceId);
      return { status: 'ok' as const, space_id: spaceId, ...bank, file_count: bank.files.length };
    },

    /** The bank's files with sizes and dates only: a listing, without reading them (resources/list). */
    async listing(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      return listFiles(spaceId);
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
      // The synthesis is read (and corrected) by its reserved name, like a bank file (validate.ts).
      if (given === SYNTHESIS_FILE) {
        const object = await storage.get(spaceKeys(spaceId).synthesis);
        if (!object) throw new LiveMemError('not_found', `space '${spaceId}' has no synthesis yet`, { space_id: spaceId, filename: given });
        return readAnswer(spaceId, given, object);
      }
      const nfc = given.normalize('NFC');
      const object = (await storage.get(spaceKeys(spaceId).bankFile(nfc))) ?? (nfc !== given ? await storage.get(spaceKeys(spaceId).bankFile(given)) : null);
      const filename = object ? baseName(object.key) : nfc;
      if (!object) throw new LiveMemError('not_found', `bank file '${filename}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename });
      return readAnswer(spaceId, filename, object);
    },

    async readAllFor(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      return { status: 'ok' as const, space_id: spaceId, ...(await readAll(spaceId)).read };
    },
  };
}

export type BankService = ReturnType<typeof createBankService>;

/** One file as `bank_read` answers it. */
const readAnswer = (spaceId: string, filename: string, object: StoredObject) => ({
  status: 'ok' as const,
  space_id: spaceId,
  filename,
  content: object.body.toString('utf8'),
  size: object.size,
  last_modified: isoSeconds(object.lastModified),
  /** What bank_write's `if_match` takes back: a correction never overwrites a change made since this read. */
  version: contentVersion(object.body.toString('utf8')),
});

const isBankFileName = (name: string): boolean => name !== KEEP_FILE && isStoredBankFilename(name);
