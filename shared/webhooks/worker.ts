import { allowInsecureWebhooks } from '../config/env.js';
import { abandonDelivery, claimAttempt, type DeliveryRef, type EndpointItem, getDelivery, recordAttempt } from '../db/webhooks.js';
import { attemptLeaseMs, attemptTimeoutMs, disableAfterSeconds, retryDelays } from './config.js';
import { disableEndpoint, getStoredEndpoint, noteFailure, noteSuccess } from './endpoints.js';
import type { FailedAttempt } from './failure-log.js';
import { enqueueDeliveries } from './queue.js';
import { openSecret } from './secrets.js';
import { type AttemptResult, type PostArgs, postWebhook } from './sender.js';

export type DeliveryStep = 'missing' | 'finished' | 'abandoned' | 'rescheduled' | 'delivered' | 'retry-scheduled' | 'failed' | 'lease-lost';

/**
 * What the worker calls beyond the table; tests and the local runtime may replace them (a
 * crash between the post and the record, for instance, is a `post` that throws after posting).
 */
export interface WorkerDeps {
  post: (args: PostArgs) => Promise<AttemptResult>;
  enqueue: (refs: DeliveryRef[], delaySeconds?: number) => Promise<void>;
  /** Told of every recorded failed attempt (the delivery handler logs them: failure-log.ts). */
  onFailedAttempt?: (failure: FailedAttempt) => void;
}

const defaultDeps: WorkerDeps = { post: postWebhook, enqueue: enqueueDeliveries };

/** The secrets a delivery is signed with now: the current one, and the previous one during a rotation's grace period. */
async function signingSecrets(endpoint: EndpointItem, now: number): Promise<string[]> {
  const context = { accountId: endpoint.account_id, endpointId: endpoint.id };
  const secrets = [await openSecret(endpoint.secret_enc, context)];
  if (endpoint.previous_secret_enc && (endpoint.previous_secret_until ?? 0) > now) secrets.push(await openSecret(endpoint.previous_secret_enc, context));
  return secrets;
}

/**
 * Handles one queue message. The message only names the delivery; what happens depends on the
 * record, so duplicate and stale messages are harmless:
 * - finished (delivered/failed) or missing → nothing;
 * - endpoint deleted, or disabled (except for a webhooks-test delivery) → `failed` without an attempt;
 * - not due yet (next_attempt_at, or another worker's lease) → re-sent with the remaining delay
 *   (at most 900 s, re-checked on receipt);
 * - due → claim the attempt (conditional write), POST, record the outcome, and on a retryable
 *   failure send the next message with the configured delay (or the receiver's Retry-After).
 * A 410 disables the endpoint (`gone`) and fails the delivery; failures since the last success
 * older than WEBHOOK_DISABLE_AFTER_SECONDS disable it (`failing`).
 * Throws on infrastructure errors (the message is then retried by the queue).
 */
export async function processDelivery(ref: DeliveryRef, deps: Partial<WorkerDeps> = {}): Promise<DeliveryStep> {
  const { post, enqueue, onFailedAttempt } = { ...defaultDeps, ...deps };
  for (let round = 0; round < 3; round++) {
    const delivery = await getDelivery(ref);
    if (!delivery) return 'missing';
    if (delivery.status !== 'pending') return 'finished';
    const endpoint = await getStoredEndpoint(ref.account_id, ref.endpoint_id);
    if (!endpoint || (!endpoint.is_active && !delivery.test)) {
      await abandonDelivery(ref, endpoint ? 'endpoint disabled' : 'endpoint deleted', new Date());
      return 'abandoned';
    }
    const now = Date.now();
    const nextAt = delivery.next_attempt_at ? Date.parse(delivery.next_attempt_at) : now;
    const due = Math.max(nextAt, delivery.lease_until ?? 0);
    if (due > now) {
      await enqueue([ref], (due - now) / 1000);
      return 'rescheduled';
    }
    const claim = await claimAttempt(ref, delivery, now, attemptLeaseMs());
    if (!claim) continue; // another worker moved first: look again

    const result = await post({
      url: endpoint.url,
      body: delivery.body,
      deliveryId: delivery.id,
      secrets: await signingSecrets(endpoint, now),
      timeoutMs: attemptTimeoutMs(),
      allowInsecure: allowInsecureWebhooks(),
    });

    const at = new Date();
    const delays = retryDelays();
    const record = async (status: 'delivered' | 'failed' | 'pending', nextAttemptAt: string | null, step: DeliveryStep): Promise<DeliveryStep> => {
      if (!(await recordAttempt(ref, claim, { status, httpStatusCode: result.statusCode, lastError: result.error, nextAttemptAt }, at))) return 'lease-lost';
      if (status !== 'delivered') onFailedAttempt?.({ deliveryId: delivery.id, endpointId: endpoint.id, attempt: claim.attempt, httpStatus: result.statusCode, error: result.error, nextAttemptAt });
      return step;
    };

    if (result.ok) {
      if (!delivery.test) await noteSuccess(endpoint);
      return record('delivered', null, 'delivered');
    }
    if (!delivery.test) {
      if (result.statusCode === 410) {
        await disableEndpoint(endpoint, 'gone', at);
        return record('failed', null, 'failed');
      }
      if ((await noteFailure(endpoint, at, disableAfterSeconds() * 1000)) === 'disabled') return record('failed', null, 'failed');
    }
    const inSchedule = claim.attempt - (delivery.schedule_base ?? 0);
    if (inSchedule >= delays.length + 1) return record('failed', null, 'failed');
    const scheduled = at.getTime() + (delays[inSchedule - 1] ?? 0) * 1000;
    // Retry-After (429/503) delays the next attempt to at least that time, capped at the largest configured delay.
    const cap = at.getTime() + Math.max(0, ...delays) * 1000;
    const nextMs = result.retryAfterMs !== undefined ? Math.max(scheduled, Math.min(result.retryAfterMs, cap)) : scheduled;
    const step = await record('pending', new Date(nextMs).toISOString(), 'retry-scheduled');
    if (step === 'retry-scheduled') await enqueue([ref], (nextMs - at.getTime()) / 1000);
    return step;
  }
  // Lost the claim three times in a row: someone else is attempting; look again shortly.
  await enqueue([ref], 1);
  return 'rescheduled';
}
