import type { Client } from '@modelcontextprotocol/client';

/**
 * The resource notifications a v2 client receives, as they arrive: the URIs updated, in order, and how
 * many list changes (what a listen stream or a subscription is told).
 */
export function recordResourceNotices(client: Client): { updated: string[]; lists: number } {
  const seen = { updated: [] as string[], lists: 0 };
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    seen.updated.push(notification.params.uri);
  });
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    seen.lists++;
  });
  return seen;
}
