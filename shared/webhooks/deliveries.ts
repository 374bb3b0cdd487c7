import { apiShape } from '../schemas/resource.js';
import { isPersonalEvent } from '../schemas/erasures.js';
import { randomUUID } from 'node:crypto';
import {
  type DeliveryItem,
  deliveriesCreatedBetween,
  deliveryId,
  findDelivery,
  getEndpointItem,
  markEnqueued,
  putDelivery,
  queryDeliveries,
  refOf,
  restartDelivery,
} from '../db/webhooks.js';
import type { OperationContext } from '../domain/context.js';
import { cursorScope } from '../domain/listing.js';
import { ApiError, notFound } from '../errors.js';
import {
  type DeliveryEventType,

  type WebhookDeliveriesInput,
  type WebhookDelivery,
  type WebhookRecoverInput,
  type WebhookResendInput,
  webhookDeliverySchema,
} from '../schemas/webhooks.js';
import { enqueueDeliveries } from './queue.js';

export { type DeliveryRef, getDelivery, markEnqueued, putDelivery, refOf } from '../db/webhooks.js';

/**
 * Delivery records (items and keys: shared/db/webhooks.ts). The id is derived from (stream
 * event id, endpoint id, created_at) and created_at from the event, so a replayed stream batch
 * addresses the same item and a conditional put creates it once.
 */
export type StoredDelivery = DeliveryItem;

export const deliveryToApi: (item: DeliveryItem) => WebhookDelivery = apiShape(webhookDeliverySchema);

export function newDelivery(args: { accountId: string; endpointId: string; eventId: string; eventType: DeliveryEventType; createdAt: string; body: string; test?: boolean; recordId?: string }): DeliveryItem {
  const createdMs = Date.parse(args.createdAt);
  const createdAt = new Date(createdMs).toISOString();
  return {
    id: deliveryId(args.eventId, args.endpointId, createdMs),
    account_id: args.accountId,
    endpoint_id: args.endpointId,
    event_id: args.eventId,
    event_type: args.eventType,
    status: 'pending',
    http_status_code: null,
    attempt_count: 0,
    last_error: '',
    next_attempt_at: createdAt,
    completed_at: null,
    created_at: createdAt,
    body: args.body,
    ...(args.test ? { test: true } : {}),
    // A contact's event: indexed by the contact, so an erasure finds its stored body (contract §18).
    ...(args.recordId && isPersonalEvent(args.eventType) ? { record_id: args.recordId } : {}),
  };
}

async function requireEndpoint(accountId: string, endpointId: string) {
  const endpoint = await getEndpointItem(accountId, endpointId);
  if (!endpoint) throw notFound('webhooks', 'webhook endpoint');
  return endpoint;
}

/**
 * webhooks-deliveries: the endpoint's deliveries newest first, optionally of one status, paginated
 * as every list (contract §4, §6): a query on its partition from the cursor's position.
 */
export async function listDeliveries(ctx: OperationContext, input: WebhookDeliveriesInput): Promise<{ deliveries: WebhookDelivery[]; next_cursor: string }> {
  await requireEndpoint(ctx.accountId, input.endpoint_id);
  const { after, next } = await cursorScope(ctx, 'webhooks', input.cursor, { endpoint_id: input.endpoint_id, status: input.status ?? null });
  const found = await queryDeliveries(ctx.accountId, input.endpoint_id, input.limit + 1, { after, status: input.status });
  const page = found.slice(0, input.limit);
  return { deliveries: page.map((d) => deliveryToApi(d.item)), next_cursor: next(found.length > input.limit ? page.at(-1)?.position : undefined) };
}

/**
 * webhooks-test: one `webhook.test` delivery, data `{ endpoint_id }`, recorded and queued at
 * once like any other (inactive endpoints included). Returns the record as written.
 */
export async function sendTestDelivery(ctx: OperationContext, id: string): Promise<WebhookDelivery> {
  await requireEndpoint(ctx.accountId, id);
  const eventId = randomUUID();
  const timestamp = new Date().toISOString();
  const body = JSON.stringify({ id: eventId, event: 'webhook.test', timestamp, data: { endpoint_id: id } });
  const delivery = newDelivery({ accountId: ctx.accountId, endpointId: id, eventId, eventType: 'webhook.test', createdAt: timestamp, body, test: true });
  await putDelivery(delivery);
  await enqueueDeliveries([refOf(delivery)]);
  await markEnqueued(refOf(delivery));
  return deliveryToApi(delivery);
}

/**
 * webhooks-resend: the delivery's original body again (same webhook-id), pending with a fresh
 * retry schedule; attempt_count keeps counting.
 */
export async function resendDelivery(ctx: OperationContext, input: WebhookResendInput): Promise<WebhookDelivery> {
  await requireEndpoint(ctx.accountId, input.endpoint_id);
  const found = await findDelivery(ctx.accountId, input.endpoint_id, input.delivery_id);
  if (!found) throw notFound('webhooks', 'webhook delivery');
  const restarted = await restartDelivery(refOf(found), new Date());
  if (!restarted) throw new ApiError('webhooks.conflict', 'an attempt of this delivery is in progress; try again shortly');
  await enqueueDeliveries([refOf(restarted)]);
  return deliveryToApi(restarted);
}

/** How far back webhooks-recover may reach. */
export const RECOVER_WINDOW_MS = 14 * 86_400_000;

/**
 * webhooks-recover: resends every `failed` delivery of the endpoint created in [since, until).
 * Only existing records: events raised while the endpoint was disabled have none.
 */
export async function recoverDeliveries(ctx: OperationContext, input: WebhookRecoverInput): Promise<{ queued: number }> {
  const now = new Date();
  if (Date.parse(input.since) < now.getTime() - RECOVER_WINDOW_MS) {
    throw new ApiError('webhooks.invalid_request', 'since must be at most 14 days ago', [{ path: 'since', message: 'must be at most 14 days ago' }]);
  }
  const endpoint = await requireEndpoint(ctx.accountId, input.endpoint_id);
  if (!endpoint.is_active) throw new ApiError('webhooks.endpoint_inactive', 'the endpoint is inactive: enable it (webhooks-update with is_active true) before recovering its deliveries');
  const until = input.until ?? now.toISOString();
  let queued = 0;
  let batch: ReturnType<typeof refOf>[] = [];
  const flush = async () => {
    if (batch.length) await enqueueDeliveries(batch);
    batch = [];
  };
  for await (const failed of deliveriesCreatedBetween(ctx.accountId, input.endpoint_id, input.since, until, 'failed')) {
    const restarted = await restartDelivery(refOf(failed), now);
    if (!restarted) continue;
    batch.push(refOf(restarted));
    queued += 1;
    if (batch.length === 10) await flush();
  }
  await flush();
  return { queued };
}
