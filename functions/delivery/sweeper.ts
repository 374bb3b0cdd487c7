import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { sweepDueDeliveries } from '../../shared/webhooks/sweeper.js';

/**
 * The delivery sweeper, run on a schedule (EventBridge deployed, a timer in local mode):
 * re-enqueues pending deliveries that are overdue (their queue message was lost). See
 * shared/webhooks/sweeper.ts.
 */
export const handler = instrumented('sweeper', async (): Promise<{ buckets: number; enqueued: number; failed: number }> => {
  const result = await sweepDueDeliveries();
  if (result.enqueued || result.failed) logger.info('delivery sweep', { ...result });
  return result;
});
