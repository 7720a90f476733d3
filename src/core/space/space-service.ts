import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError } from '../../shared/errors.js';
import { listKeys } from '../../storage/list.js';
import { authorize, canAccessSpace, type Caller, holds } from '../caller.js';
import { type BacklogReach, backlogOf, defaultReach } from '../backlog.js';
import { contentVersion } from '../bank/bank-files.js';
import type { CoreContext } from '../context.js';
import { KEEP_FILE, spaceKeys } from '../layout.js';
import { validateSpaceId } from '../validate.js';
import { capInForce, capReport, capUpdate } from '../spend/cap.js';
import { spendSummary } from '../spend/report.js';
import { isUnreadableMeta, listSpaceIds, loadMeta, requireSpace, updateMeta, type SpaceMeta } from '../space-meta.js';
import { isoSeconds } from '../../shared/time.js';
import { createSpace, type SpaceCreateInput } from './space-create.js';
import { deleteSpace } from './space-delete.js';
import { boundedText, MAX_DESCRIPTION_CHARS, MAX_OWNER_CHARS, MAX_PROJECT_CHARS } from './space-fields.js';
import { describeSpace } from './space-info.js';
import type { SpaceChanged, SpaceParts } from './space-ports.js';
/** What `space list` says of a space whose meta is not JSON. */
const BROKEN_META = '_meta.json is unreadable (not JSON): repair it by hand or restore a backup (`live-mem doctor` says more)';

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

export function createSpaceService(context: CoreContext, parts: SpaceParts, changed: SpaceChanged = () => undefined) {
  const { storage } = context;

  const info = (spaceId: string, measuredBank?: ReturnType<SpaceParts['measureBank']>) => describeSpace(context, parts, spaceId, measuredBank);

  const readText = async (key: string): Promise<string> => (await storage.get(key))?.body.toString('utf8') ?? '';

  return {
    create: (caller: Caller, input: SpaceCreateInput) => createSpace(context, changed, caller, input),

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

    delete: (caller: Caller, input: { space_id: string; confirm?: boolean }) => deleteSpace(context, changed, caller, input),
  };
}

export type SpaceService = ReturnType<typeof createSpaceService>;
