import { type AccountMeta, readMeta } from '../db/meta.js';
import { familyOf, toApi } from '../domain/records/family.js';
import { entityByType } from '../schemas/entities/index.js';
import type { WebhookEvent, WebhookPayload } from '../schemas/webhooks.js';
import type { RecordChange } from '../db/changes.js';
import { erasedAmong } from '../db/erasures.js';
import { readDeletionActor } from '../db/events.js';
import { isPersonalEvent, redactPayload } from '../schemas/erasures.js';
import { storedActor } from '../schemas/events.js';
import { type DeliveryRef, markEnqueued, newDelivery, putDelivery, refOf } from './deliveries.js';
import { listStoredEndpoints, type StoredEndpoint } from './endpoints.js';
import { enqueueDeliveries } from './queue.js';
import { subscribedAt } from './subscriptions.js';

/** Per stream batch: each account's endpoints and metadata are read once. */
export class WebhookBatchCache {
  private endpoints = new Map<string, Promise<StoredEndpoint[]>>();
  private metas = new Map<string, Promise<AccountMeta>>();
  private erased = new Map<string, Promise<Set<string>>>();
  endpointsOf(accountId: string): Promise<StoredEndpoint[]> {
    let p = this.endpoints.get(accountId);
    if (!p) this.endpoints.set(accountId, (p = listStoredEndpoints(accountId)));
    return p;
  }
  /**
   * Whether a contact (or an activity erased with one) is erased or being erased (contract §18):
   * its changes are logged and delivered redacted. The batch's records of an account are looked up
   * together, once (`prefetchErased`: one BatchGetItem per 100 records); one not prefetched, alone.
   */
  async isErased(accountId: string, contactId: string): Promise<boolean> {
    const key = `${accountId}\0${contactId}`;
    let p = this.erased.get(key);
    if (!p) this.erased.set(key, (p = erasedAmong(accountId, [contactId])));
    return (await p).has(contactId);
  }
  prefetchErased(changes: readonly RecordChange[]): void {
    const byAccount = new Map<string, string[]>();
    for (const c of changes) {
      const key = `${c.accountId}\0${c.id}`;
      if (!isPersonalEvent(`${c.type}.`) || this.erased.has(key)) continue;
      byAccount.set(c.accountId, [...(byAccount.get(c.accountId) ?? []), c.id]);
    }
    for (const [accountId, ids] of byAccount) {
      const unique = [...new Set(ids)];
      const p = erasedAmong(accountId, unique);
      for (const id of unique) this.erased.set(`${accountId}\0${id}`, p);
    }
  }
  metaOf(accountId: string): Promise<AccountMeta> {
    let p = this.metas.get(accountId);
    if (!p) this.metas.set(accountId, (p = readMeta(accountId)));
    return p;
  }
}

/** When the change's event was raised: the record's updated_at for created/updated, the stream's time for deleted (the payload's `timestamp`). */
export function eventTimeOf(change: RecordChange): string {
  return change.op !== 'deleted' && typeof change.new?.updated_at === 'string' ? change.new.updated_at : change.at;
}

/**
 * How precisely the stream dates a change: DynamoDB to the second; DynamoDB Local to the minute.
 * A deletion is dated only by the stream (the record is gone): it was raised after the record's
 * last write and by the end of that second (minute, locally).
 */
const STREAM_TIME_PRECISION_MS = () => (process.env.CRM_LOCAL === 'true' || process.env.DYNAMODB_ENDPOINT ? 60_000 : 1_000);

/** The range of moments within which the change's event was raised (one moment, but for deletions). */
export function eventTimeRange(change: RecordChange): [string, string] {
  if (change.op !== 'deleted') {
    const at = eventTimeOf(change);
    return [at, at];
  }
  const lastWrite = typeof change.old?.updated_at === 'string' ? change.old.updated_at : '';
  const from = lastWrite > change.at ? lastWrite : change.at;
  const to = new Date(Date.parse(change.at) + STREAM_TIME_PRECISION_MS() - 1).toISOString();
  return [from, to > from ? to : from];
}

/** The event a record change raises, if its entity raises events (from the entity list). */
export function eventOf(change: RecordChange): WebhookEvent | undefined {
  if (!entityByType(change.type)?.events || change.op === 'merging') return undefined;
  return `${change.type}.${change.op}` as WebhookEvent;
}

/**
 * The event a change raises and its payload, as the change log and webhooks receive it. A change
 * of an erased contact, or of an activity erased with it (contract §18), is redacted
 * (`data: { id }`); the contact's removal by the erasure raises nothing here (the erasure raises
 * `contact.erased` itself), an activity's raises its `activity.deleted`, redacted.
 */
export async function eventAndPayload(change: RecordChange, cache: WebhookBatchCache): Promise<{ event: WebhookEvent; payload: WebhookPayload } | undefined> {
  const event = eventOf(change);
  if (!event) return undefined;
  const erased = change.op !== 'erased' && isPersonalEvent(event) && (await cache.isErased(change.accountId, change.id));
  if (erased && change.op === 'deleted' && change.type === 'contact') return undefined;
  const payload = buildPayload(await resolveActor(change), event, await cache.metaOf(change.accountId));
  return { event, payload: erased ? (redactPayload(payload) as WebhookPayload) : payload };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** The fields of a stage change's `previous_attributes` (contract §19). */
const STAGE_PLACE = ['pipeline_id', 'stage_id', 'stage', 'status'] as const;

/**
 * Who made the change: the actor stored with the write; for a deletion (no new image) the one
 * its transaction kept beside the record. Anything unknown is the system.
 */
export async function resolveActor(change: RecordChange): Promise<RecordChange> {
  if (change.actor === undefined && !change.new) change.actor = await readDeletionActor(change.accountId, change.type, change.id);
  return change;
}

/**
 * The event's body, the same for its webhooks and the change log (contract §12:
 * `{ id, event, timestamp, record_id, data, previous_attributes?, actor }`).
 * Deterministic for a given stream record (a replay builds the same bytes):
 * `timestamp` is the record's updated_at for created/updated and the stream time for deleted;
 * `data` is the record as the API returns it, for `*.deleted` as it was just before. An
 * `*.updated` body also carries `previous_attributes`: the fields that changed (besides
 * `updated_at`), with their values before the change, as the API returned them.
 */
export function buildPayload(change: RecordChange, event: WebhookEvent, meta: AccountMeta): WebhookPayload {
  const actor = storedActor(change.actor);
  // `<type>.erased` (contract §18): the record is gone; `data` is its id only.
  if (change.op === 'erased') return { id: change.eventId, event, timestamp: change.at, record_id: change.id, data: { id: change.id }, actor };
  const fam = familyOf(entityByType(change.type)!);
  const deleted = change.op === 'deleted';
  const image = (deleted ? change.old : change.new) ?? {};
  // A deleted record keeps the names it stored: a rename that happened after the deletion
  // must not show up in its last picture. The same holds for the picture before an update.
  const stored = { ...meta, overrides: new Map() };
  const data = toApi(fam, image, deleted ? stored : meta);
  const timestamp = eventTimeOf(change);
  // `<type>.merged` (contract §15): `data` the primary, `merged_id` the secondary.
  if (change.op === 'merged') return { id: change.eventId, event, timestamp, record_id: change.id, data, merged_id: change.mergedId, actor };
  if (change.op === 'stage_changed') {
    // Contract §19: the place it left (a new record's empty values when it was created into its stage).
    const before = change.old ? toApi(fam, change.old, stored) : fam.empty;
    const previous = Object.fromEntries(STAGE_PLACE.map((k) => [k, before[k]]));
    return { id: change.eventId, event, timestamp, record_id: change.id, data, previous_attributes: previous, actor };
  }
  if (change.op !== 'updated' || !change.old) return { id: change.eventId, event, timestamp, record_id: change.id, data, actor };
  const before = toApi(fam, change.old, stored);
  const previous = Object.fromEntries(Object.entries(before).filter(([k, v]) => k !== 'updated_at' && !same(v, data[k])));
  return { id: change.eventId, event, timestamp, record_id: change.id, data, previous_attributes: previous, actor };
}

/** What enqueueWebhookDeliveries calls beyond the table (tests replace `enqueue` to crash between the write and the send). */
export interface PipelineDeps {
  enqueue: (refs: DeliveryRef[]) => Promise<void>;
}

/**
 * Turns one record change into deliveries: one record (`pending`) and one queue message per
 * active endpoint of the account subscribed to the event. Idempotent: a replay finds the
 * records; one still pending, never attempted and never marked enqueued (the previous run died
 * between the write and the send) is sent again. Duplicate messages are harmless: the worker
 * acts on the record's state, not on the message. (A message lost after `enqueued` was set is
 * the sweeper's business: shared/webhooks/sweeper.ts.)
 */
export async function enqueueWebhookDeliveries(
  change: RecordChange,
  cache: WebhookBatchCache,
  deps: PipelineDeps = { enqueue: enqueueDeliveries },
  /** The body built once for the change log (the same payload for both); built here when absent. */
  built?: WebhookPayload,
): Promise<number> {
  const event = eventOf(change);
  if (!event) return 0;
  // By the event's own time, not by when this worker reaches it (contract §6).
  const [at, latest] = eventTimeRange(change);
  const endpoints = (await cache.endpointsOf(change.accountId)).filter((e) => subscribedAt(e, event, at, latest));
  if (endpoints.length === 0) return 0;
  const payload = built ?? (await eventAndPayload(change, cache))?.payload;
  if (!payload) return 0;
  const body = JSON.stringify(payload);
  const toSend: DeliveryRef[] = [];
  await Promise.all(
    endpoints.map(async (endpoint) => {
      const delivery = newDelivery({ accountId: change.accountId, endpointId: endpoint.id, eventId: change.eventId, eventType: event, createdAt: payload.timestamp, body, recordId: change.id });
      const put = await putDelivery(delivery);
      if (put.created || (put.existing && put.existing.status === 'pending' && put.existing.attempt_count === 0 && !put.existing.enqueued)) {
        toSend.push(refOf(delivery));
      }
    }),
  );
  if (toSend.length === 0) return 0;
  await deps.enqueue(toSend);
  await Promise.all(toSend.map(markEnqueued));
  return toSend.length;
}
