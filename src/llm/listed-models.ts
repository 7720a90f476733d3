import type OpenAI from 'openai';
import { nearest } from '../shared/suggest.js';
import { ModelNotListed } from './types.js';

/** An endpoint's answer to GET /models: the ids it lists, and whether that is all of them (no further page). */
export interface ModelListing {
  ids: string[];
  complete: boolean;
}

/** A dated snapshot's suffix: `-20250929` (Anthropic), `-2024-08-06` (OpenAI). */
const SNAPSHOT = /^-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

/**
 * Whether a listing offers `model`: by its id, as the alias of a listed dated snapshot
 * (`claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`, `gpt-4o` for `gpt-4o-2024-08-06`, and a
 * `-latest` name for any snapshot of its stem), or as Ollama's `:latest` tag (`qwen2.5` for
 * `qwen2.5:latest`). Endpoints take those names without listing them.
 */
export function offersModel(model: string, ids: readonly string[]): boolean {
  const stem = model.endsWith('-latest') ? model.slice(0, -'-latest'.length) : model;
  return ids.some((id) => id === model || id === `${model}:latest` || (id.startsWith(stem) && SNAPSHOT.test(id.slice(stem.length))));
}

/** GET /models, read whole: the ids, and `has_more` (Anthropic pages its list) saying whether more are left. */
export async function listModels(client: OpenAI, signal: AbortSignal): Promise<ModelListing> {
  const response = await client.models.list({ signal }).asResponse();
  const body = (await response.json().catch(() => ({}))) as { data?: unknown; has_more?: unknown };
  const ids = (Array.isArray(body.data) ? body.data : []).flatMap((item: { id?: unknown }) => (typeof item?.id === 'string' ? [item.id] : []));
  return { ids, complete: body.has_more !== true };
}

/**
 * Throws ModelNotListed when the endpoint lists its models and `model` is not among them: the call
 * that uses it would be refused (404, or a model that does not exist). A listing that is empty or
 * partial proves nothing, and passes.
 */
export function checkListed(model: string, listing: ModelListing): void {
  if (!listing.complete || listing.ids.length === 0 || offersModel(model, listing.ids)) return;
  throw new ModelNotListed(model, listing.ids, nearest(model, listing.ids));
}
