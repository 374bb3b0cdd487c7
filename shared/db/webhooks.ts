import { createHash, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { cond, eq, exists, filter, is, itemOf, merge, notExists, or, partition, transact, update, valueOf } from './expr.js';
import { isConditionFailure, newestFirst, queryAll, queryPartition, writeUnlessRefused } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

/**
 * The webhook data layer: every DynamoDB call of endpoints, deliveries and the delivery sweeper.
 *
 * - Endpoint: `{ pk: A#<account>#wh, sk: <id> }` — API fields, `secret_enc`, and during a
 *   rotation's grace period `previous_secret_enc` / `previous_secret_until`. Absent
 *   `failing_since` means null. A counter item (`keys.webhookEndpointCount`) caps endpoints per
 *   account; it changes in the same transaction as the endpoint.
 * - Delivery: `{ pk: A#<account>#wh#<endpoint>, sk: <created_at>#<id> }` — API fields plus
 *   `body`, `enqueued`, `lease_id`/`lease_until`, `schedule_base`, `test`, `sweeps`/`swept_at`, and the TTL
 *   attribute (created_at + 30 days). While pending it also carries the sparse GSI1 pair
 *   `WHDUE#<hour of due time>#<shard>` / `<due time>#<id>` that the sweeper reads.
 */

// ---- items ------------------------------------------------------------------------------------

export interface EndpointItem {
  id: string;
  account_id: string;
  created_by: string;
  url: string;
  description: string;
  secret_prefix: string;
  events: string[];
  is_active: boolean;
  disabled_reason?: string;
  failing_since?: string | null;
  created_at: string;
  updated_at: string;
  secret_enc: string;
  previous_secret_enc?: string;
  /** Epoch milliseconds: deliveries are signed with the previous secret too until then. */
  previous_secret_until?: number;
  /** What it subscribed to when (shared/webhooks/subscriptions.ts): which events it gets is decided by their own time. */
  subscriptions?: Array<{ events: string[]; from: string; until?: string }>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryItem {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  http_status_code: number | null;
  attempt_count: number;
  last_error: string;
  next_attempt_at: string | null;
  completed_at: string | null;
  created_at: string;
  /** The exact bytes every attempt posts. */
  body: string;
  /** The first queue message was sent. */
  enqueued?: boolean;
  /** An attempt is in progress (a worker that dies frees it when lease_until passes). */
  lease_id?: string;
  lease_until?: number;
  /** attempt_count when the current retry schedule began (0, or the count at the last resend). */
  schedule_base?: number;
  /** A webhooks-test delivery: sent to inactive endpoints too, leaves the endpoint's health alone. */
  test?: boolean;
  /** How often the sweeper re-enqueued it without an attempt being recorded since, and when it last did. */
  sweeps?: number;
  swept_at?: number;
  /** A contact's event: the contact (its deliveries are indexed by it, for an erasure: contract §18). */
  record_id?: string;
}

/** What a queue message carries: enough to address the delivery item. */
export interface DeliveryRef {
  account_id: string;
  endpoint_id: string;
  delivery_id: string;
  created_at: string;
}

export const refOf = (d: Pick<DeliveryItem, 'account_id' | 'endpoint_id' | 'id' | 'created_at'>): DeliveryRef => ({
  account_id: d.account_id,
  endpoint_id: d.endpoint_id,
  delivery_id: d.id,
  created_at: d.created_at,
});

const deliveryKey = (ref: DeliveryRef) => keys.webhookDelivery(ref.account_id, ref.endpoint_id, ref.created_at, ref.delivery_id);
const strip = <T extends object>(item: Record<string, unknown> | undefined) => itemOf<T>(item, [TABLE_DEFINITION.ttlAttribute]);

/** Delivery records are removed by the table's TTL this long after they were created. */
export const DELIVERY_RETENTION_SECONDS = 30 * 86_400;
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;

// ---- endpoints ----------------------------------------------------------------------------------

export async function getEndpointItem(accountId: string, id: string): Promise<EndpointItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhookEndpoint(accountId, id), ConsistentRead: true }));
  return strip<EndpointItem>(out.Item);
}

/** Every endpoint of an account, newest first (one query on the account's endpoint partition). */
export async function listEndpointItems(accountId: string): Promise<EndpointItem[]> {
  const items = await queryPartition<Record<string, unknown>>(keys.webhookEndpointPartition(accountId));
  return items.map((i) => strip<EndpointItem>(i)!).sort(newestFirst);
}

/**
 * Creates the endpoint and counts it, in one transaction. False when the account already has
 * `max` endpoints. An account whose counter does not exist yet (endpoints created before the
 * counter) starts from the number of endpoints it has.
 */
export async function insertEndpoint(item: EndpointItem, max = MAX_ENDPOINTS_PER_ACCOUNT): Promise<boolean> {
  const counterKey = keys.webhookEndpointCount(item.account_id);
  const counter = await db().send(new GetCommand({ TableName: tableName(), Key: counterKey, ConsistentRead: true }));
  const counted = typeof counter.Item?.n === 'number';
  const base = counted ? 0 : (await listEndpointItems(item.account_id)).length;
  if (!counted && base >= max) return false;
  const refused = await transact([
    { Update: { TableName: tableName(), Key: counterKey, ...(counted ? update({ add: { n: 1 } }, is('n', '<', max)) : update({ set: { n: base + 1 } }, notExists('n'))) } },
    { Put: { TableName: tableName(), Item: { ...keys.webhookEndpoint(item.account_id, item.id), ...item }, ...notExists() } },
  ]);
  if (!refused) return true;
  if (refused.at[0] !== 0) throw refused.error;
  // Full, or another create changed the counter between the read and the write: look again.
  const again = await db().send(new GetCommand({ TableName: tableName(), Key: counterKey, ConsistentRead: true }));
  if (typeof again.Item?.n === 'number' && again.Item.n >= max) return false;
  return insertEndpoint(item, max);
}

export interface EndpointChange {
  set?: Record<string, unknown>;
  remove?: string[];
  /** An extra condition (attribute names/values prefixed `#c`/`:c`). */
  condition?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

/**
 * Changes the named attributes of an existing endpoint; returns the endpoint after the change,
 * undefined when it does not exist or the extra condition does not hold.
 */
export async function updateEndpointItem(accountId: string, id: string, change: EndpointChange): Promise<EndpointItem | undefined> {
  const extra = change.condition && cond(change.condition.expression, change.condition.values, change.condition.names);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookEndpoint(accountId, id),
        ...update({ set: change.set, remove: change.remove }, exists(), extra),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<EndpointItem>(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Deletes the endpoint and uncounts it. False when it did not exist. */
export async function deleteEndpointItem(accountId: string, id: string): Promise<boolean> {
  const counterKey = keys.webhookEndpointCount(accountId);
  const counter = await db().send(new GetCommand({ TableName: tableName(), Key: counterKey, ConsistentRead: true }));
  const del = { TableName: tableName(), Key: keys.webhookEndpoint(accountId, id), ...exists() };
  if (typeof counter.Item?.n !== 'number') return writeUnlessRefused({ Delete: del });
  const refused = await transact([{ Delete: del }, { Update: { TableName: tableName(), Key: counterKey, ...update({ add: { n: -1 } }, is('n', '>', 0)) } }]);
  if (!refused) return true;
  if (refused.at[0] === 0) return false;
  // The counter was at 0 (out of step): the endpoint is deleted all the same.
  await writeUnlessRefused({ Delete: del });
  return true;
}

// ---- deliveries ---------------------------------------------------------------------------------

/**
 * A delivery id: a UUID in version 7 layout whose 48-bit time is the delivery's `created_at`
 * (milliseconds) and whose other bits are a SHA-256 of (event id, endpoint id). Deterministic,
 * so a replayed stream batch addresses the same item; and the id alone finds the item
 * (webhooks-resend gets only ids).
 */
export function deliveryId(eventId: string, endpointId: string, createdAtMs: number): string {
  const h = createHash('sha256').update(`webhook-delivery\0${eventId}\0${endpointId}`).digest();
  h.writeUIntBE(createdAtMs, 0, 6);
  h[6] = (h[6]! & 0x0f) | 0x70;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The created_at a version-7 delivery id carries (undefined for other ids). */
export function createdAtOfId(id: string): string | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)) return undefined;
  return new Date(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toISOString();
}

/** Sweeper index partitions are sharded so that a burst of deliveries spreads over several. */
export const DUE_SHARDS = 4;
export const hourBucket = (iso: string) => iso.slice(0, 13);
const shardOf = (id: string) => createHash('sha256').update(id).digest()[0]! % DUE_SHARDS;
const dueAttributes = (dueAt: string, id: string) => keys.webhookDue(hourBucket(dueAt), shardOf(id), dueAt, id);

/** A delivery's lease and sweep bookkeeping, and its entry in the sweeper's index (GSI1). */
const LEASE_ATTRIBUTES = ['lease_id', 'lease_until', 'sweeps', 'swept_at'];
const DUE_ATTRIBUTES = [TABLE_DEFINITION.gsi1.partitionKey, TABLE_DEFINITION.gsi1.sortKey];

const ttlOf = (createdAt: string) => Math.floor(Date.parse(createdAt) / 1000) + DELIVERY_RETENTION_SECONDS;

/**
 * Creates the record once (due now in the sweeper's index); on a replay returns the record that
 * exists.
 */
export async function putDelivery(d: DeliveryItem, now = new Date()): Promise<{ created: true } | { created: false; existing: DeliveryItem | undefined }> {
  // The index entry first: a delivery is never stored without it (a retry writes it again).
  if (d.record_id) {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.webhookDeliveryOfRecord(d.account_id, d.record_id, d.endpoint_id, d.created_at, d.id), endpoint_id: d.endpoint_id, created_at: d.created_at, id: d.id, [TABLE_DEFINITION.ttlAttribute]: ttlOf(d.created_at) },
      }),
    );
  }
  const item = { ...deliveryKey(refOf(d)), ...dueAttributes(now.toISOString(), d.id), [TABLE_DEFINITION.ttlAttribute]: ttlOf(d.created_at), ...d };
  try {
    await db().send(new PutCommand({ TableName: tableName(), Item: item, ...notExists() }));
    return { created: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { created: false, existing: await getDelivery(refOf(d)) };
  }
}

export async function getDelivery(ref: DeliveryRef): Promise<DeliveryItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: deliveryKey(ref), ConsistentRead: true }));
  return strip<DeliveryItem>(out.Item);
}

/** The delivery `id` of the endpoint (one read for version-7 ids; older ids: one query). */
export async function findDelivery(accountId: string, endpointId: string, id: string): Promise<DeliveryItem | undefined> {
  const createdAt = createdAtOfId(id);
  if (createdAt) {
    const found = await getDelivery({ account_id: accountId, endpoint_id: endpointId, delivery_id: id, created_at: createdAt });
    if (found) return found;
  }
  for await (const item of queryAll(merge(partition(keys.webhookDeliveryPartition(accountId, endpointId)), filter(eq('id', id))))) {
    return strip<DeliveryItem>(item);
  }
  return undefined;
}

export async function markEnqueued(ref: DeliveryRef): Promise<void> {
  await writeUnlessRefused({ Update: { TableName: tableName(), Key: deliveryKey(ref), ...update({ set: { enqueued: true } }, exists()) } });
}

/** Conditions of a delivery's lease: it is pending; no lease is held, or the one held ran out at `now` (epoch ms). */
const isPending = eq('status', 'pending');
const leaseFree = (now: number) => or(notExists('lease_id'), is('lease_until', '<=', now));

export interface Claim {
  attempt: number;
  leaseId: string;
}

/**
 * Takes the next attempt: increments attempt_count and sets a lease, only if nobody else holds
 * one. A lease that ran out belongs to a worker that died mid-attempt: its attempt is re-run
 * under the same number. Undefined when another worker won.
 */
export async function claimAttempt(ref: DeliveryRef, seen: DeliveryItem, now: number, leaseMs: number): Promise<Claim | undefined> {
  const leaseId = randomUUID();
  const redo = seen.lease_id !== undefined;
  const attempt = redo ? seen.attempt_count : seen.attempt_count + 1;
  const claimed = await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(ref),
      ...update(
        { set: { attempt_count: attempt, lease_id: leaseId, lease_until: now + leaseMs } },
        isPending,
        ...(redo ? [eq('lease_id', seen.lease_id), is('lease_until', '<=', now)] : [eq('attempt_count', seen.attempt_count), notExists('lease_id')]),
      ),
    },
  });
  return claimed ? { attempt, leaseId } : undefined;
}

export interface AttemptOutcome {
  status: DeliveryStatus;
  httpStatusCode: number | null;
  lastError: string;
  nextAttemptAt: string | null;
}

/**
 * Records an attempt under its lease (and moves the delivery in the sweeper's index: to its
 * next due time while pending, out when finished). False when the lease was lost.
 */
export async function recordAttempt(ref: DeliveryRef, claim: Claim, outcome: AttemptOutcome, at: Date): Promise<boolean> {
  const pending = outcome.status === 'pending' && outcome.nextAttemptAt !== null;
  const due = pending ? dueAttributes(outcome.nextAttemptAt!, ref.delivery_id) : undefined;
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(ref),
      ...update(
        {
          set: {
            status: outcome.status,
            http_status_code: outcome.httpStatusCode,
            last_error: outcome.lastError,
            next_attempt_at: outcome.nextAttemptAt,
            completed_at: outcome.status === 'pending' ? null : at.toISOString(),
            ...due,
          },
          remove: [...LEASE_ATTRIBUTES, ...(due ? [] : DUE_ATTRIBUTES)],
        },
        isPending,
        eq('lease_id', claim.leaseId),
      ),
    },
  });
}

/** A pending delivery that will not be attempted again ends `failed` (no lease held, or it ran out). */
export async function abandonDelivery(ref: DeliveryRef, reason: string, at: Date): Promise<void> {
  await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(ref),
      ...update(
        { set: { status: 'failed', last_error: reason, next_attempt_at: null, completed_at: at.toISOString() }, remove: [...LEASE_ATTRIBUTES, ...DUE_ATTRIBUTES] },
        isPending,
        leaseFree(at.getTime()),
      ),
    },
  });
}

/**
 * webhooks-resend: the delivery goes back to `pending`, due now, with a fresh retry schedule
 * (`schedule_base` = attempts so far; attempt_count keeps counting). Not while an attempt holds
 * a live lease. Returns the record after the change, undefined when it is gone or leased.
 */
export async function restartDelivery(ref: DeliveryRef, at: Date): Promise<DeliveryItem | undefined> {
  const now = at.toISOString();
  const due = dueAttributes(now, ref.delivery_id);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: deliveryKey(ref),
        ...update(
          { set: { status: 'pending', next_attempt_at: now, completed_at: null, schedule_base: valueOf('attempt_count'), enqueued: true, ...due }, remove: LEASE_ATTRIBUTES },
          exists(),
          leaseFree(at.getTime()),
        ),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip<DeliveryItem>(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** The endpoint's newest deliveries (one query on its partition). */
/**
 * Up to `limit` deliveries of the endpoint, newest first, after the position `after` (a sort
 * key, exclusive) and with `status` when given (filtered on the way: the endpoint's partition
 * holds 30 days of deliveries at most). Returns them with each one's position.
 */
export async function queryDeliveries(accountId: string, endpointId: string, limit: number, opts: { after?: string; status?: DeliveryStatus } = {}): Promise<Array<{ item: DeliveryItem; position: string }>> {
  const pk = keys.webhookDeliveryPartition(accountId, endpointId);
  const found: Array<{ item: DeliveryItem; position: string }> = [];
  let start: Record<string, unknown> | undefined = opts.after ? { pk, sk: opts.after } : undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...merge(partition(pk), opts.status && filter(eq('status', opts.status))),
        ScanIndexForward: false,
        Limit: opts.status ? Math.max(limit, 100) : limit - found.length,
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const i of out.Items ?? []) {
      if (found.length < limit) found.push({ item: strip<DeliveryItem>(i)!, position: String(i.sk) });
    }
    start = out.LastEvaluatedKey;
  } while (start && found.length < limit);
  return found;
}

/**
 * Deliveries of the endpoint with `status` created in [since, until): a key range of the
 * endpoint's partition (sort key `<created_at>#<id>`, so `BETWEEN since AND until` stops before
 * `until`), the status filtered on the way.
 */
export async function* deliveriesCreatedBetween(accountId: string, endpointId: string, since: string, until: string, status: DeliveryStatus): AsyncGenerator<DeliveryItem> {
  for await (const item of queryAll(merge(partition(keys.webhookDeliveryPartition(accountId, endpointId), ['between', since, until]), filter(eq('status', status))))) {
    yield strip<DeliveryItem>(item)!;
  }
}

// ---- erasure (contract §18) ------------------------------------------------------------------

/** Every delivery of a record's events (its index partition: one query, bounded by the record). */
export async function* deliveriesOfRecord(accountId: string, recordId: string): AsyncGenerator<DeliveryRef> {
  for await (const item of queryAll(partition(keys.webhookDeliveryOfRecordPartition(accountId, recordId)))) {
    yield { account_id: accountId, endpoint_id: String(item.endpoint_id), delivery_id: String(item.id), created_at: String(item.created_at) };
  }
}

/** Replaces a stored delivery's body (what every later attempt, resend or recover posts); false when it is gone. */
export async function rewriteDeliveryBody(ref: DeliveryRef, rewrite: (body: string) => string): Promise<boolean> {
  const current = await getDelivery(ref);
  if (!current) return false;
  return writeUnlessRefused({ Update: { TableName: tableName(), Key: deliveryKey(ref), ...update({ set: { body: rewrite(current.body) } }, exists()) } });
}

// ---- the sweeper's index --------------------------------------------------------------------

/**
 * Pending deliveries due at or before `cutoff` in one hour bucket (all shards), oldest due
 * first: queries on the sparse GSI1 partitions, never a scan.
 */
export async function* dueDeliveries(bucket: string, cutoff: string): AsyncGenerator<DeliveryItem> {
  for (let shard = 0; shard < DUE_SHARDS; shard++) {
    for await (const item of queryAll({ IndexName: TABLE_DEFINITION.gsi1.name, ...partition(keys.webhookDuePartition(bucket, shard), ['<=', `${cutoff}#~`], 'gsi1') })) {
      yield strip<DeliveryItem>(item)!;
    }
  }
}

/**
 * Counts one sweep of a pending delivery (at `now`, epoch ms), unless the last sweep was less
 * than `gapMs` ago. Returns the new count; undefined when it is no longer pending or was swept
 * too recently.
 */
export async function countSweep(ref: DeliveryRef, now: number, gapMs: number): Promise<number | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: deliveryKey(ref),
        ...update({ set: { swept_at: now }, add: { sweeps: 1 } }, isPending, or(notExists('swept_at'), is('swept_at', '<=', now - gapMs))),
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return out.Attributes?.sweeps as number;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

const SWEEP_MARK = () => keys.system('WEBHOOK_SWEEP');

/** The oldest hour bucket that may still hold due deliveries (the sweeper's watermark). */
export async function readSweepMark(): Promise<string | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: SWEEP_MARK(), ConsistentRead: true }));
  return typeof out.Item?.bucket === 'string' ? out.Item.bucket : undefined;
}

export async function writeSweepMark(bucket: string): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...SWEEP_MARK(), bucket } }));
}
