import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { situationOf } from '../../shared/hints.js';
import { near } from '../../shared/suggest.js';
import { canAccessSpace, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { listSpaceIds } from '../space-meta.js';

/**
 * A missing space's error with the spaces near its name that the caller may see (`similar_spaces`):
 * what it most likely meant — a typo, or a project's space named in part (`webapp` for
 * `acme-webapp-kgtmie3wqx`) — which the hint offers instead of creating the mistyped name. Both shells
 * call this where an error reaches the user; the core's errors stay free of a listing. Any other
 * error, none near, or a listing that fails: the error as it was (the refusal matters, not the advice).
 */
export async function withSimilarSpaces(context: CoreContext, caller: Caller, error: unknown): Promise<unknown> {
  if (!isLiveMemError(error)) return error;
  const { situation, about } = situationOf(error.code, error.message, error.data);
  if (situation !== 'space_missing') return error;
  let similar: string[];
  try {
    const visible = (await listSpaceIds(context)).filter((id) => id !== about.space && canAccessSpace(caller, id));
    similar = near(about.space, visible);
  } catch {
    return error;
  }
  if (similar.length === 0) return error;
  return new LiveMemError(error.code, error.message, { ...error.data, similar_spaces: similar }, { cause: error.cause });
}
