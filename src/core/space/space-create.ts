/**
 * `space_create`: a space's files laid out, then its meta written create-only under the new-space
 * claim. Its own module because the order of writes (files first, meta last) is what makes a create
 * cut short harmless, and that reasoning should sit in one place.
 */
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { isoSeconds } from '../../shared/time.js';
import { MAX_RULES_CHARS } from '../bank/rules.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { KEEP_FILE, spaceKeys } from '../layout.js';
import { serializeMeta, type SpaceMeta } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { claimNewSpace } from './claim.js';
import { DEFAULT_RULES } from './default-rules.js';
import { boundedText, MAX_DESCRIPTION_CHARS, MAX_OWNER_CHARS, MAX_PROJECT_CHARS } from './space-fields.js';
import type { SpaceChanged } from './space-ports.js';

export interface SpaceCreateInput {
  space_id: string;
  description?: string;
  rules?: string;
  owner?: string;
  /** The project it is made for (space-meta.ts `project`). */
  project?: string;
}

/** Creates the space `input` names (`already_exists` if it does), then tells `changed`. */
export async function createSpace(context: CoreContext, changed: SpaceChanged, caller: Caller, input: SpaceCreateInput) {
  const { storage } = context;
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
}
