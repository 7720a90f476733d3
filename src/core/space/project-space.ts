import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { PROJECT_MOVED } from '../../shared/hints.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { readRawMeta } from '../space-meta.js';

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
 * The space of `claim`: its own id when that space exists or no older one does; the older space when
 * its meta records this project; its own id, silently, when the older space records another; and a
 * `conflict` refusal when the older space records none (made before projects were recorded).
 */
export async function projectSpace(context: CoreContext, claim: ProjectClaim): Promise<ProjectSpace> {
  const { space_id: own, project, legacy_id: legacy } = claim;
  if (project === undefined || legacy === undefined || legacy === own) return { space_id: own, exists: false };
  if (await context.freshStat(spaceKeys(own).meta)) return { space_id: own, exists: true };
  let recorded: unknown;
  try {
    recorded = (await readRawMeta(context, legacy)).raw.project;
  } catch (error) {
    if (isLiveMemError(error, 'not_found')) return { space_id: own, exists: false };
    throw error;
  }
  if (recorded === project) return { space_id: legacy, older: `the older space '${legacy}', bound to this project`, exists: true };
  if (typeof recorded === 'string' && recorded !== '') return { space_id: own, exists: false };
  throw new LiveMemError(
    'conflict',
    `this project (${project}) ${PROJECT_MOVED} '${own}', and an older space '${legacy}' exists, made before spaces recorded their project: ` +
      `it may hold this project's notes, or another project's of the same name. Decide once, in the project: ` +
      `\`live-mem space bind ${legacy}\` keeps using '${legacy}' for this project, \`live-mem space bind --new\` starts '${own}'; ` +
      'or give space_id',
    { space_id: own, older_space_id: legacy },
  );
}
