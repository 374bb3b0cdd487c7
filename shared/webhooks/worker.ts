import { allowInsecureWebhooks, attemptLeaseMs, attemptTimeoutMs, retryDelays } from './config.js';
import { abandonDelivery, claimAttempt, type DeliveryRef, getDelivery, recordAttempt } from './deliveries.js';
import { getStoredEndpoint } from './endpoints.js';
import { webhookFaults } from './faults.js';
import { enqueueDeliveries } from './queue.js';
import { openSecret } from './secrets.js';
import { postWebhook } from './sender.js';

export type DeliveryStep = 'missing' | 'finished' | 'abandoned' | 'rescheduled' | 'delivered' | 'retry-scheduled' | 'failed' | 'lease-lost';

/**
 * Handles one queue message. The message only names the delivery; what happens depends on the
 * record, so duplicate and stale messages are harmless:
 * - finished (delivered/failed) or missing → nothing;
 * - endpoint deleted or disabled → `failed` without an attempt;
 * - not due yet (next_attempt_at, or another worker's lease) → re-sent with the remaining delay
 *   (at most 900 s, re-checked on receipt);
 * - due → claim the attempt (conditional write), POST, record the outcome, and on a retryable
 *   failure send the next message with the configured delay.
 * Throws on infrastructure errors (the message is then retried by the queue).
 */
export async function processDelivery(ref: DeliveryRef): Promise<DeliveryStep> {
  for (let round = 0; round < 3; round++) {
    const delivery = await getDelivery(ref);
    if (!delivery) return 'missing';
    if (delivery.status !== 'pending') return 'finished';
    const endpoint = await getStoredEndpoint(ref.account_id, ref.endpoint_id);
    if (!endpoint || !endpoint.is_active) {
      await abandonDelivery(ref, endpoint ? 'endpoint disabled' : 'endpoint deleted', new Date());
      return 'abandoned';
    }
    const now = Date.now();
    const nextAt = delivery.next_attempt_at ? Date.parse(delivery.next_attempt_at) : now;
    const due = Math.max(nextAt, delivery.lease_until ?? 0);
    if (due > now) {
      await enqueueDeliveries([ref], (due - now) / 1000);
      return 'rescheduled';
    }
    const claim = await claimAttempt(ref, delivery, now, attemptLeaseMs());
    if (!claim) continue; // another worker moved first: look again

    const secret = await openSecret(endpoint.secret_enc, { accountId: ref.account_id, endpointId: ref.endpoint_id });
    const result = await postWebhook({ url: endpoint.url, body: delivery.body, deliveryId: delivery.id, secret, timeoutMs: attemptTimeoutMs(), allowInsecure: allowInsecureWebhooks() });
    webhookFaults.afterPost?.();

    const at = new Date();
    const delays = retryDelays();
    if (result.ok) {
      const recorded = await recordAttempt(ref, claim, { status: 'delivered', httpStatusCode: result.statusCode, lastError: '', nextAttemptAt: null }, at);
      return recorded ? 'delivered' : 'lease-lost';
    }
    if (claim.attempt >= delays.length + 1) {
      const recorded = await recordAttempt(ref, claim, { status: 'failed', httpStatusCode: result.statusCode, lastError: result.error, nextAttemptAt: null }, at);
      return recorded ? 'failed' : 'lease-lost';
    }
    const delay = delays[claim.attempt - 1] ?? 0;
    const nextAttemptAt = new Date(at.getTime() + delay * 1000).toISOString();
    const recorded = await recordAttempt(ref, claim, { status: 'pending', httpStatusCode: result.statusCode, lastError: result.error, nextAttemptAt }, at);
    if (!recorded) return 'lease-lost';
    await enqueueDeliveries([ref], delay);
    return 'retry-scheduled';
  }
  // Lost the claim three times in a row: someone else is attempting; look again shortly.
  await enqueueDeliveries([ref], 1);
  return 'rescheduled';
}
