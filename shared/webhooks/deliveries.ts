import { createHash, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/client.js';
import { isConditionFailure } from '../db/records.js';
import { keys } from '../db/table.js';
import { notFound } from '../errors.js';
import type { OperationContext } from '../domain/context.js';
import { WEBHOOK_DELIVERY_FIELDS, type WebhookDeliveriesInput, type WebhookDelivery, type WebhookEvent } from '../schemas/webhooks.js';
import { getStoredEndpoint } from './endpoints.js';

/**
 * Delivery records: `{ pk: A#<account>#wh#<endpoint>, sk: <created_at>#<id> }`. The id is derived
 * from (stream event id, endpoint id) and created_at from the event, so a replayed stream batch
 * addresses the same item and a conditional put creates it once.
 *
 * Bookkeeping beside the API fields: `body` (the exact bytes every attempt posts), `enqueued`
 * (the first queue message was sent), `lease_id`/`lease_until` (an attempt is in progress).
 */
export interface StoredDelivery extends WebhookDelivery {
  account_id: string;
  body: string;
  enqueued?: boolean;
  lease_id?: string;
  lease_until?: number;
}

/** What a queue message carries: enough to address the delivery item. */
export interface DeliveryRef {
  account_id: string;
  endpoint_id: string;
  delivery_id: string;
  created_at: string;
}

export const refOf = (d: Pick<StoredDelivery, 'account_id' | 'endpoint_id' | 'id' | 'created_at'>): DeliveryRef => ({
  account_id: d.account_id,
  endpoint_id: d.endpoint_id,
  delivery_id: d.id,
  created_at: d.created_at,
});

const keyOf = (ref: DeliveryRef) => keys.webhookDelivery(ref.account_id, ref.endpoint_id, ref.created_at, ref.delivery_id);

/** A name-based UUID (version 5 layout, SHA-256 truncated) of the event and the endpoint. */
export function deliveryId(eventId: string, endpointId: string): string {
  const h = createHash('sha256').update(`webhook-delivery\0${eventId}\0${endpointId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const deliveryToApi = (item: Record<string, unknown>): WebhookDelivery =>
  Object.fromEntries(WEBHOOK_DELIVERY_FIELDS.map((k) => [k, item[k]])) as unknown as WebhookDelivery;

export function newDelivery(args: { accountId: string; endpointId: string; eventId: string; eventType: WebhookEvent; createdAt: string; body: string }): StoredDelivery {
  return {
    id: deliveryId(args.eventId, args.endpointId),
    account_id: args.accountId,
    endpoint_id: args.endpointId,
    event_id: args.eventId,
    event_type: args.eventType,
    status: 'pending',
    http_status_code: null,
    attempt_count: 0,
    last_error: '',
    next_attempt_at: args.createdAt,
    completed_at: null,
    created_at: args.createdAt,
    body: args.body,
  };
}


/** Creates the record once; on a replay returns the record that exists. */
export async function putDelivery(d: StoredDelivery): Promise<{ created: true } | { created: false; existing: StoredDelivery | undefined }> {
  try {
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keyOf(refOf(d)), ...d }, ConditionExpression: 'attribute_not_exists(pk)' }));
    return { created: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { created: false, existing: await getDelivery(refOf(d)) };
  }
}

export async function getDelivery(ref: DeliveryRef): Promise<StoredDelivery | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keyOf(ref), ConsistentRead: true }));
  return out.Item as StoredDelivery | undefined;
}

export async function markEnqueued(ref: DeliveryRef): Promise<void> {
  try {
    await db().send(new UpdateCommand({ TableName: tableName(), Key: keyOf(ref), UpdateExpression: 'SET enqueued = :t', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':t': true } }));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

export interface Claim {
  attempt: number;
  leaseId: string;
}

/**
 * Takes the next attempt: increments attempt_count and sets a lease, only if nobody else holds
 * one. A lease that ran out belongs to a worker that died mid-attempt: its attempt is re-run
 * under the same number. Undefined when another worker won.
 */
export async function claimAttempt(ref: DeliveryRef, seen: StoredDelivery, now: number, leaseMs: number): Promise<Claim | undefined> {
  const leaseId = randomUUID();
  const redo = seen.lease_id !== undefined;
  const attempt = redo ? seen.attempt_count : seen.attempt_count + 1;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyOf(ref),
        UpdateExpression: 'SET attempt_count = :n, lease_id = :lease, lease_until = :until',
        ConditionExpression: redo
          ? '#s = :pending AND lease_id = :old AND lease_until <= :now'
          : '#s = :pending AND attempt_count = :seen AND attribute_not_exists(lease_id)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':n': attempt,
          ':lease': leaseId,
          ':until': now + leaseMs,
          ':pending': 'pending',
          ...(redo ? { ':old': seen.lease_id, ':now': now } : { ':seen': seen.attempt_count }),
        },
      }),
    );
    return { attempt, leaseId };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

export interface AttemptOutcome {
  status: 'pending' | 'delivered' | 'failed';
  httpStatusCode: number | null;
  lastError: string;
  nextAttemptAt: string | null;
}

/** Records an attempt under its lease. False when the lease was lost (another worker took over). */
export async function recordAttempt(ref: DeliveryRef, claim: Claim, outcome: AttemptOutcome, at: Date): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyOf(ref),
        UpdateExpression: 'SET #s = :s, http_status_code = :code, last_error = :err, next_attempt_at = :next, completed_at = :done REMOVE lease_id, lease_until',
        ConditionExpression: '#s = :pending AND lease_id = :lease',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':s': outcome.status,
          ':code': outcome.httpStatusCode,
          ':err': outcome.lastError,
          ':next': outcome.nextAttemptAt,
          ':done': outcome.status === 'pending' ? null : at.toISOString(),
          ':pending': 'pending',
          ':lease': claim.leaseId,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** A pending delivery whose endpoint was deleted or disabled ends `failed` without an attempt. */
export async function abandonDelivery(ref: DeliveryRef, reason: string, at: Date): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyOf(ref),
        UpdateExpression: 'SET #s = :failed, last_error = :err, next_attempt_at = :null, completed_at = :at REMOVE lease_id, lease_until',
        ConditionExpression: '#s = :pending AND (attribute_not_exists(lease_id) OR lease_until <= :now)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':failed': 'failed', ':err': reason, ':null': null, ':at': at.toISOString(), ':pending': 'pending', ':now': at.getTime() },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** webhooks-deliveries: the endpoint's deliveries newest first (one query on its partition). */
export async function listDeliveries(ctx: OperationContext, input: WebhookDeliveriesInput): Promise<{ deliveries: WebhookDelivery[] }> {
  if (!(await getStoredEndpoint(ctx.accountId, input.endpoint_id))) throw notFound('webhooks', 'webhook endpoint');
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :p',
      ExpressionAttributeValues: { ':p': keys.webhookDeliveryPartition(ctx.accountId, input.endpoint_id) },
      ScanIndexForward: false,
      Limit: input.limit,
      ConsistentRead: true,
    }),
  );
  return { deliveries: (out.Items ?? []).map(deliveryToApi) };
}
