import type { ProgressEvent } from '../core/consolidation/consolidation-service.js';
import type { ToolExtra } from './tool.js';

/**
 * Progress notifications for one tool call (notifications/progress, sent only when the request
 * carries a progress token). They are sent without waiting, and the answer waits for them (`sent`):
 * a notification that overtook the answer would reach a client that had already forgotten the
 * call's progress token.
 */
export function progressChannel(extra: ToolExtra) {
  let sent: Promise<unknown> = Promise.resolve();
  return {
    report(event: ProgressEvent) {
      const progressToken = extra._meta?.progressToken;
      if (progressToken === undefined) return;
      const notification = extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: event.notes_done, total: event.notes_total, message: event.message },
        })
        .catch(() => undefined);
      sent = Promise.all([sent, notification]);
    },
    sent: () => sent,
  };
}
