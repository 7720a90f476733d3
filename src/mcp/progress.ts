import type { ProgressEvent } from '../core/consolidation/consolidation-service.js';
import type { RequestContext } from './tool.js';

/**
 * Progress notifications for one tool call (notifications/progress, sent only when the request
 * carries a progress token). They are sent without waiting, and the answer waits for them (`sent`):
 * a notification that overtook the answer would reach a client that had already forgotten the
 * call's progress token.
 */
export function progressChannel(ctx: RequestContext) {
  let sent: Promise<unknown> = Promise.resolve();
  return {
    report(event: ProgressEvent) {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken === undefined) return;
      const notification = ctx.mcpReq
        .notify({
          method: 'notifications/progress',
          params: { progressToken, progress: event.notes_done, total: event.notes_total, message: event.message },
        })
        .catch(() => undefined);
      sent = Promise.all([sent, notification]);
    },
    sent: () => sent,
  };
}
