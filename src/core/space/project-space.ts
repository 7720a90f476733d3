import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { PROJECT_MOVED } from '../../shared/hints.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { listSpaceIds, readRawMeta } from '../space-meta.js';

/**
 * Which space a project uses, the one decision for every reader of a project's default space (the
 * MCP server's roots and folder, the session-start hook's `context .`). A project's id changed when
 * the owner and host became part of it (`webapp` became `acme-webapp-<hash>`), and a space named by
 * the rule before may hold its notes — or another project's of the same name: an older space is
 * used only where its meta records this very project, and one recording nothing is left for a
 * person to decide (`live-mem space bind`), never guessed.
 */

/** A project as config/project-identity.ts names it (the core reads no folder). */
export interface ProjectClaim {
  space_id: string;
  /** Its canonical identity (`github.com/acme/webapp`), which a space made for it records. */
  project?: string | undefined;
  /** The id the rule before gave it (`webapp`). */
  legacy_id?: string | undefined;
}

export interface ProjectSpace {
  space_id: string;
  /** Said when the older space is used. */
  older?: string;
  /** The space exists: the answer holds until the store changes under it. */
  exists: boolean;
}

/**
 * The space of `claim`. The older spaces are those named like its former id but for case (`WebApp`
 * and `webapp` were two spaces for two spellings of one remote's URL), so that every clone of one
 * project finds the one a person bound, whatever its URL's case. In order: an older space whose meta
 * records this project; its own space, when it exists; a `conflict` refusal when an older space
 * records none (made before projects were recorded); its own id (an older space recording another
 * project is someone else's, and is not mentioned).
 */
export async function projectSpace(context: CoreContext, claim: ProjectClaim): Promise<ProjectSpace> {
  const { space_id: own, project, legacy_id: legacy } = claim;
  if (project === undefined || legacy === undefined || legacy === own) return { space_id: own, exists: false };
  const former = legacy.toLowerCase();
  const older = (await listSpaceIds(context)).filter((id) => id.toLowerCase() === former && id !== own);
  const recorded = await Promise.all(older.map(async (id) => ({ id, project: await recordedProject(context, id) })));
  const bound = recorded.find((space) => space.project === project);
  if (bound) return { space_id: bound.id, older: `the older space '${bound.id}', bound to this project`, exists: true };
  if (await context.freshStat(spaceKeys(own).meta)) return { space_id: own, exists: true };
  const undecided = recorded.find((space) => space.project === null);
  if (!undecided) return { space_id: own, exists: false };
  const name = undecided.id;
  throw new LiveMemError(
    'conflict',
    `this project (${project}) ${PROJECT_MOVED} '${own}', and an older space '${name}' exists, made before spaces recorded their project: ` +
      `it may hold this project's notes, or another project's of the same name. Decide once, in the project: ` +
      `\`live-mem space bind ${name}\` keeps using '${name}' for this project, \`live-mem space bind --new\` starts '${own}'; ` +
      'or give space_id',
    { space_id: own, older_space_id: name },
  );
}

/** The project a space's meta records; null when none; undefined when the space is gone. */
async function recordedProject(context: CoreContext, spaceId: string): Promise<string | null | undefined> {
  try {
    const { project } = (await readRawMeta(context, spaceId)).raw;
    return typeof project === 'string' && project !== '' ? project : null;
  } catch (error) {
    if (isLiveMemError(error, 'not_found')) return undefined;
    throw error;
  }
}
