import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CALL_TIME_LIMITS } from '../config/call-limits.js';
import { optionalEnv } from '../config/env.js';
import { deliveryQueueUrl, MAX_SQS_DELAY_SECONDS } from './config.js';
import type { DeliveryRef } from '../db/webhooks.js';

let client: SQSClient | undefined;

/**
 * The SQS client. Deployed, the queue URL (DELIVERY_QUEUE_URL) names the endpoint. Locally,
 * AWS_ENDPOINT_URL_SQS (the SDK's own variable) points at the in-process queue, whose queue
 * URLs carry a host name that need not resolve.
 */
export function sqs(): SQSClient {
  client ??= new SQSClient({ maxAttempts: 4, requestHandler: CALL_TIME_LIMITS, ...(optionalEnv('AWS_ENDPOINT_URL_SQS') ? { useQueueUrlAsEndpoint: false } : {}) });
  return client;
}

export function parseDeliveryRef(body: string): DeliveryRef | undefined {
  try {
    const m = JSON.parse(body) as Partial<Record<keyof DeliveryRef, unknown>> | null;
    const { account_id, endpoint_id, delivery_id, created_at } = m ?? {};
    if (typeof account_id === 'string' && typeof endpoint_id === 'string' && typeof delivery_id === 'string' && typeof created_at === 'string') return { account_id, endpoint_id, delivery_id, created_at };
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * Sends one message per delivery (batches of 10). `delaySeconds` is capped at SQS's 900 s;
 * the worker re-checks `next_attempt_at` on receipt and re-sends when the wait is longer.
 * Throws when any message could not be sent (callers retry; duplicates are harmless).
 */
export async function enqueueDeliveries(refs: DeliveryRef[], delaySeconds = 0): Promise<void> {
  const delay = Math.max(0, Math.min(Math.ceil(delaySeconds), MAX_SQS_DELAY_SECONDS));
  for (let i = 0; i < refs.length; i += 10) {
    const chunk = refs.slice(i, i + 10);
    const out = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: deliveryQueueUrl(),
        Entries: chunk.map((ref, j) => ({ Id: String(j), MessageBody: JSON.stringify(ref), DelaySeconds: delay })),
      }),
    );
    if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} delivery message(s): ${out.Failed.map((f) => f.Code).join(', ')}`);
  }
}
