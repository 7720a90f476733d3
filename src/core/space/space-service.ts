import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError, unconfirmed } from '../../shared/errors.js';
import type { EmbeddingsProgress } from '../../llm/embeddings.js';
import { listKeys } from '../../storage/list.js';
import { authorize, canAccessSpace, type Caller, holds } from '../caller.js';
import { type BacklogReach, backlogOf, defaultReach } from '../backlog.js';
import { contentVersion } from '../bank/bank-files.js';
import type { BankService } from '../bank/bank-service.js';
import type { CoreContext } from '../context.js';
import type { CoreEvent } from '../events.js';
import { KEEP_FILE, spaceKeys } from '../layout.js';
import { validateSpaceId } from '../validate.js';
import { capInForce, capReport, capUpdate } from '../spend/cap.js';
import { spendSummary } from '../spend/report.js';
import { claimNewSpace } from './claim.js';
import { MAX_RULES_CHARS } from '../bank/rules.js';
import { DEFAULT_RULES } from './default-rules.js';
import { isUnreadableMeta, listSpaceIds, loadMeta, requireSpace, serializeMeta, updateMeta, type SpaceMeta } from '../space-meta.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { isoSeconds } from '../../shared/time.js';

const MAX_DESCRIPTION_CHARS = 2_000;
const MAX_OWNER_CHARS = 200;
const MAX_PROJECT_CHARS = 2_000;
/** What `space list` says of a space whose meta is not JSON. */
const BROKEN_META = '_meta.json is unreadable (not JSON): repair it by hand or restore a backup (`live-mem doctor` says more)';

export interface SpaceCreateInput {
  space_id: string;
  description?: string;
  rules?: string;
  owner?: string;
  /** The project it is made for (space-meta.ts `project`). */
  project?: string;
}

export interface SpaceUpdateInput {
  space_id: string;
  description?: string;
  owner?: string;
  /** The space's own daily cap of model tokens (spend/cap.ts: a writer's only lowers the cap in force, an admin's replaces it; 0 = none). */
  llm_daily_tokens?: number;
}

/** The space a first note makes (LIVE_MEM_AUTO_CREATE_SPACES): the default rules, and a description saying how it came. */
export const firstNoteSpace = (spaceId: string, agent: string): SpaceCreateInput => ({
  space_id: spaceId,
  description: `created by the first note of ${agent}`,
});

/** Which parts of a space describe it; `space_info` and friends are assembled from these. */
export interface SpaceParts {
  countLiveNotes(spaceId: string): Promise<{ notes_count: number; total_size: number; oldest_note: string | null; newest_note: string | null }>;
  listBank(spaceId: string): Promise<Array<{ filename: string; size: number }>>;
  measureBank(spaceId: string): ReturnType<BankService['measure']>;
  readBank(spaceId: string): ReturnType<BankService['readAll']>;
  /** How far the space's embeddings are in this process (recall-service.ts), when embeddings are configured. */
  embeddings?(spaceId: string): EmbeddingsProgress | undefined;
}

/** Told after a space is created or deleted in this process (see events.ts); must not throw. */
export type SpaceChanged = (event: CoreEvent & { type: 'space_created' | 'space_deleted' }) => void;

export function createSpaceService(context: CoreContext, parts: SpaceParts, changed: SpaceChanged = () => undefined) {
  const { storage } = context;

  /** A space described; `measuredBank` is given when the caller reads the bank anyway (space_summary). */
  const info = async (spaceId: string, measuredBank?: ReturnType<SpaceParts['measureBank']>) => {
    const keys = spaceKeys(spaceId);
    const { meta } = await loadMeta(context, spaceId);
    const [rules, synthesis, live, bank] = await Promise.all([
      storage.stat(keys.rules),
      storage.stat(keys.synthesis),
      parts.countLiveNotes(spaceId),
      measuredBank ?? parts.measureBank(spaceId),
    ]);
    const embeddings = parts.embeddings?.(spaceId);
    return {
      space_id: spaceId,
      description: meta.description,
      owner: meta.owner,
      created_at: meta.created_at,
      rules_size: rules?.size ?? 0,
      live,
      bank: {
        files_count: bank.files.length,
        total_size: bank.files.reduce((sum, file) => sum + file.size, 0),
        files: bank.files.map((file) => file.filename),
        total_tokens: bank.total_tokens,
        budget_tokens: bank.budget_tokens,
        over_budget: bank.over_budget,
        file_budgets: bank.files.map(({ filename, tokens, budget_tokens, over_budget }) => ({ filename, tokens, budget_tokens, over_budget })),
      },
      // Absent, not null, before the first one: tools/list declares a plain optional string (space_info's schema).
      ...(meta.last_consolidation !== null ? { last_consolidation: meta.last_consolidation } : {}),
      consolidation_count: meta.consolidation_count,
      total_notes_processed: meta.total_notes_processed,
      synthesis_exists: synthesis !== null,
      ...(embeddings ? { embeddings } : {}),
    };
  };

  const readText = async (key: string): Promise<string> => (await storage.get(key))?.body.toString('utf8') ?? '';

  return {
    async create(caller: Caller, input: SpaceCreateInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      const description = boundedText('description', input.description ?? '', MAX_DESCRIPTION_CHARS);
      const owner = boundedText('owner', input.owner ?? '', MAX_OWNER_CHARS);
      const rules = input.rules && input.rules.trim().length > 0 ? normalizeLineEndings(input.rules) : DEFAULT_RULES;
      if (rules.length > MAX_RULES_CHARS) throw invalid(`rules have ${rules.length} characters; the limit is ${MAX_RULES_CHARS}`);

      const keys = spaceKeys(spaceId);
      const createdAt = isoSeconds(context.clock());
      const meta: SpaceMeta = {
        space_id: spaceId,
        description,
        owner: owner || caller.agent,
        created_at: createdAt,
        last_consolidation: null,
        consolidation_count: 0,
        total_notes_processed: 0,
        ...(input.project ? { project: boundedText('project', input.project, MAX_PROJECT_CHARS) } : {}),
      };
      // Like an import: files first, the meta last and create-only (it is what makes the space exist).
      const held = await claimNewSpace(context, spaceId, caller, 'create');
      const files = [keys.rules, `${keys.live}${KEEP_FILE}`, `${keys.bank}${KEEP_FILE}`];
      try {
        await Promise.all([
          storage.put(keys.rules, rules, { contentType: 'text/markdown; charset=utf-8' }),
          // Folder sentinels, as the Python server lays a space out.
          storage.put(`${keys.live}${KEEP_FILE}`, ''),
          storage.put(`${keys.bank}${KEEP_FILE}`, ''),
        ]);
        // Create-only even under the lease: a writer that takes no lease (the Python server) may race.
        await storage.put(keys.meta, serializeMeta(meta), { ifNoneMatch: '*', contentType: 'application/json' });
      } catch (error) {
        const created = isLiveMemError(error, 'precondition_failed');
        if (!created) await storage.deleteMany(files).catch(() => undefined);
        throw created ? new LiveMemError('already_exists', `space '${spaceId}' already exists`, { space_id: spaceId }) : error;
      } finally {
        await held.release();
      }
      changed({ type: 'space_created', space_id: spaceId });
      return { status: 'created' as const, space_id: spaceId, description, owner: meta.owner, rules_size: Buffer.byteLength(rules), created_at: createdAt };
    },

    async list(caller: Caller) {
      authorize(caller, 'read');
      const ids = (await listSpaceIds(context)).filter((id) => canAccessSpace(caller, id));
      const spaces = await mapLimit(ids, context.storage.parallelism, async (spaceId) => {
        try {
          const { meta } = await loadMeta(context, spaceId);
          const [notes, bank] = await Promise.all([listKeys(storage, spaceKeys(spaceId).live), parts.listBank(spaceId)]);
          return {
            space_id: spaceId,
            description: meta.description,
            owner: meta.owner,
            created_at: meta.created_at,
            live_notes_count: notes.filter((key) => !key.endsWith(`/${KEEP_FILE}`)).length,
            bank_files_count: bank.length,
          };
        } catch (error) {
          if (isLiveMemError(error, 'not_found')) return null; // a folder without meta is not a space
          // One damaged space must not hide the others: it is listed, as broken.
          if (isUnreadableMeta(error)) return { space_id: spaceId, description: '', error: BROKEN_META };
          throw error;
        }
      });
      const found = spaces.filter((space) => space !== null);
      return { status: 'ok' as const, spaces: found, total: found.length };
    },

    async info(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const [spaceInfo, spend] = await Promise.all([info(spaceId), spendSummary(context, spaceId)]);
      return { status: 'ok' as const, ...spaceInfo, spend };
    },

    async rules(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      const rules = await readText(spaceKeys(spaceId).rules);
      return { status: 'ok' as const, space_id: spaceId, rules, version: contentVersion(rules) };
    },

    /** The synthesis consolidation keeps; empty before the first consolidation. */
    async synthesis(caller: Caller, input: { space_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      await requireSpace(context, spaceId);
      return { status: 'ok' as const, space_id: spaceId, synthesis: await readText(spaceKeys(spaceId).synthesis) };
    },

    /** Everything a session resumes from, and the backlog of notes as `reach` (who consolidates for this caller) says it. */
    async summary(caller: Caller, input: { space_id: string }, reach: BacklogReach = defaultReach(context)) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const keys = spaceKeys(spaceId);
      const bank = parts.readBank(spaceId);
      const measured = bank.then((loaded) => loaded.measured);
      measured.catch(() => undefined); // a failure is reported once, by `bank` below (info may not await this)
      const [spaceInfo, rules, synthesis, { read }] = await Promise.all([info(spaceId, measured), readText(keys.rules), readText(keys.synthesis), bank]);
      const backlog = backlogOf(spaceInfo.live.notes_count, { ...reach, tool: reach.tool && holds(caller, 'write') });
      return { status: 'ok' as const, ...spaceInfo, rules, synthesis, ...read, backlog };
    },

    async update(caller: Caller, input: SpaceUpdateInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      if (input.description === undefined && input.owner === undefined && input.llm_daily_tokens === undefined)
        throw invalid('nothing to update: give a description, an owner or llm_daily_tokens');
      const description = input.description === undefined ? undefined : boundedText('description', input.description, MAX_DESCRIPTION_CHARS);
      const owner = input.owner === undefined ? undefined : boundedText('owner', input.owner, MAX_OWNER_CHARS);
      const cap = input.llm_daily_tokens;
      if (cap !== undefined && !(typeof cap === 'number' && Number.isSafeInteger(cap) && cap >= 0))
        throw invalid(`llm_daily_tokens must be a whole number of tokens, 0 or more (0 = no cap for this space), got ${JSON.stringify(cap)}`);
      const updatedAt = isoSeconds(context.clock());
      // The cap's rules (spend/cap.ts) are applied to the meta as it is, inside its compare-and-swap.
      const meta = await updateMeta(context, spaceId, (current) => ({
        ...(cap === undefined ? current : (capUpdate(caller, current, cap, context.limits) as SpaceMeta)),
        ...(description === undefined ? {} : { description }),
        ...(owner === undefined ? {} : { owner }),
        updated_at: updatedAt,
      }));
      return {
        status: 'ok' as const,
        space_id: spaceId,
        description: meta.description,
        owner: meta.owner,
        ...(cap === undefined ? {} : { llm_daily_tokens: cap, daily_cap: capReport(capInForce(meta, context.limits), spaceId) }),
        updated_at: updatedAt,
      };
    },

    /**
     * Records `project` as the one the space belongs to, so that the project's default space is this
     * one (project-space.ts). A space that records another project is refused: it is someone else's.
     */
    async bindProject(caller: Caller, input: { space_id: string; project: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      const project = boundedText('project', input.project, MAX_PROJECT_CHARS);
      if (!project.trim()) throw invalid('project must not be empty');
      let before: unknown;
      await updateMeta(context, spaceId, (meta) => {
        before = meta.project;
        if (typeof before === 'string' && before !== '' && before !== project)
          throw invalid(`space '${spaceId}' belongs to another project (${before}); nothing was changed`, { space_id: spaceId });
        return { ...meta, project };
      });
      return { status: 'ok' as const, space_id: spaceId, project, changed: before !== project };
    },

    async delete(caller: Caller, input: { space_id: string; confirm?: boolean }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'admin', spaceId);
      if (input.confirm !== true) throw unconfirmed(`deleting space '${spaceId}' erases all its notes and bank`);
      await requireSpace(context, spaceId);
      const keys = spaceKeys(spaceId);
      let deleted: number;
      if (storage.removeFolder) {
        // One step (fs): the space is gone at once, and a note written into it from now on fails.
        deleted = await storage.removeFolder(keys.root);
      } else {
        // The meta goes last: a delete cut short leaves a space that still exists and can be deleted
        // again. Then, once no process can still trust the meta it saw (notes trust it for
        // `knownSpaceMs`, see note-service.ts), one more sweep takes the notes that landed meanwhile.
        const all = await listKeys(storage, keys.root);
        await storage.deleteMany(all.filter((key) => key !== keys.meta));
        await storage.delete(keys.meta);
        await new Promise((resolve) => setTimeout(resolve, context.limits.knownSpaceMs * 1.1 + 100));
        const late = await listKeys(storage, keys.root);
        await storage.deleteMany(late);
        deleted = all.length + late.length;
      }
      changed({ type: 'space_deleted', space_id: spaceId });
      return { status: 'deleted' as const, space_id: spaceId, files_deleted: deleted };
    },
  };
}

export type SpaceService = ReturnType<typeof createSpaceService>;

function boundedText(field: string, value: string, max: number): string {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} has ${value.length} characters; the limit is ${max}`);
  return value;
}
