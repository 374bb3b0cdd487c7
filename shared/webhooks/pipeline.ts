import { type AccountMeta, readMeta } from '../db/meta.js';
import { companyToApi } from '../domain/companies.js';
import { contactToApi } from '../domain/contacts.js';
import type { WebhookEvent, WebhookPayload } from '../schemas/webhooks.js';
import type { RecordChange } from '../stream/changes.js';
import { type DeliveryRef, markEnqueued, newDelivery, putDelivery, refOf } from './deliveries.js';
import { listStoredEndpoints, type StoredEndpoint } from './endpoints.js';
import { webhookFaults } from './faults.js';
import { enqueueDeliveries } from './queue.js';

/** Per stream batch: each account's endpoints and metadata are read once. */
export class WebhookBatchCache {
  private endpoints = new Map<string, Promise<StoredEndpoint[]>>();
  private metas = new Map<string, Promise<AccountMeta>>();
  endpointsOf(accountId: string): Promise<StoredEndpoint[]> {
    let p = this.endpoints.get(accountId);
    if (!p) this.endpoints.set(accountId, (p = listStoredEndpoints(accountId)));
    return p;
  }
  metaOf(accountId: string): Promise<AccountMeta> {
    let p = this.metas.get(accountId);
    if (!p) this.metas.set(accountId, (p = readMeta(accountId)));
    return p;
  }
}

export function eventOf(change: RecordChange): WebhookEvent | undefined {
  if (change.type !== 'contact' && change.type !== 'company') return undefined;
  return `${change.type}.${change.op}`;
}

/**
 * The event's body. Deterministic for a given stream record (a replay builds the same bytes):
 * `timestamp` is the record's updated_at for created/updated and the stream time for deleted;
 * `data` is the record as the API returns it, for `*.deleted` as it was just before.
 */
export function buildPayload(change: RecordChange, event: WebhookEvent, meta: AccountMeta): WebhookPayload {
  const deleted = change.op === 'deleted';
  const image = (deleted ? change.old : change.new) ?? {};
  // A deleted record keeps the names it stored: a rename that happened after the deletion
  // must not show up in its last picture.
  const view = deleted ? { ...meta, overrides: new Map() } : meta;
  const data = change.type === 'contact' ? contactToApi(image, view) : companyToApi(image, view);
  const timestamp = change.op !== 'deleted' && typeof change.new?.updated_at === 'string' ? change.new.updated_at : change.at;
  return { id: change.eventId, event, timestamp, data };
}

/**
 * Turns one record change into deliveries: one record (`pending`) and one queue message per
 * active endpoint of the account subscribed to the event. Idempotent: a replay finds the
 * records; one still pending, never attempted and never marked enqueued (the previous run died
 * between the write and the send) is sent again. Duplicate messages are harmless: the worker
 * acts on the record's state, not on the message.
 */
export async function enqueueWebhookDeliveries(change: RecordChange, cache: WebhookBatchCache): Promise<number> {
  const event = eventOf(change);
  if (!event) return 0;
  const endpoints = (await cache.endpointsOf(change.accountId)).filter((e) => e.is_active && e.events.includes(event));
  if (endpoints.length === 0) return 0;
  const payload = buildPayload(change, event, await cache.metaOf(change.accountId));
  const body = JSON.stringify(payload);
  const toSend: DeliveryRef[] = [];
  await Promise.all(
    endpoints.map(async (endpoint) => {
      const delivery = newDelivery({ accountId: change.accountId, endpointId: endpoint.id, eventId: change.eventId, eventType: event, createdAt: payload.timestamp, body });
      const put = await putDelivery(delivery);
      if (put.created || (put.existing && put.existing.status === 'pending' && put.existing.attempt_count === 0 && !put.existing.enqueued)) {
        toSend.push(refOf(delivery));
      }
    }),
  );
  webhookFaults.afterDeliveryWrite?.();
  if (toSend.length === 0) return 0;
  await enqueueDeliveries(toSend);
  await Promise.all(toSend.map(markEnqueued));
  return toSend.length;
}
