/**
 * What a change of the core's feed (core/feed/change-feed.ts) means for MCP resources: the URIs whose
 * content it changed and whether it changed the list. Kept apart from the transport's notifications so
 * that the 2025 era's resources/updated and list_changed and the 2026 era's subscriptions/listen map
 * changes the same way.
 */
import type { FeedEvent } from '../core/feed/change-feed.js';

/** The URI of each resource; space ids and bank file names are URI-safe, the encoding is a guard. */
export const resourceUri = {
  bank: (spaceId: string, filename: string) => `live-mem://${spaceId}/bank/${encodeURIComponent(filename)}`,
  rules: (spaceId: string) => `live-mem://${spaceId}/rules`,
  synthesis: (spaceId: string) => `live-mem://${spaceId}/synthesis`,
  live: (spaceId: string) => `live-mem://${spaceId}/live`,
};

/** The resources whose content this change altered. */
export function updatedUris(event: FeedEvent): string[] {
  switch (event.type) {
    case 'notes':
    case 'committed': // a commit moves notes out of live/ (consolidation) or forgets some
      return [resourceUri.live(event.space_id)];
    case 'bank_changed': {
      const uris = event.files.map((file) => resourceUri.bank(event.space_id, file.filename));
      if (event.synthesis) uris.push(resourceUri.synthesis(event.space_id));
      if (event.rules) uris.push(resourceUri.rules(event.space_id));
      return uris;
    }
    default:
      return [];
  }
}

/** Whether this change adds or removes resources: a bank file created or deleted, a space created or deleted. */
export function changesList(event: FeedEvent): boolean {
  if (event.type === 'bank_changed') return event.files.some((file) => file.kind !== 'updated');
  return event.type === 'space_created' || event.type === 'space_deleted';
}
