/**
 * webhooks-replay (contract §12): the retained events of the account in [since, until) that the
 * endpoint subscribes to (and within `types`), sent to it as new deliveries whose body is the
 * event exactly as first raised (same `id`), including events raised while it was disabled or
 * before it existed.
 */
import { getEndpointItem } from '../db/webhooks.js';
import type { OperationContext } from '../domain/context.js';
import { entriesFrom } from '../domain/events.js';
import { ApiError, notFound } from '../errors.js';
import type { WebhookReplayInput } from '../schemas/events.js';
import type { DeliveryEventType } from '../schemas/webhooks.js';
import { type DeliveryRef, markEnqueued, newDelivery, putDelivery, refOf } from './deliveries.js';
import { enqueueDeliveries } from './queue.js';

/**
 * An event is appended to the log after its change (its `timestamp`) commits, normally within
 * seconds: the walk goes on this long past `until` for events of the window logged late.
 */
const LATE_APPEND_MS = 5 * 60_000;

export async function replayEvents(ctx: OperationContext, input: WebhookReplayInput): Promise<{ queued: number }> {
  const endpoint = await getEndpointItem(ctx.accountId, input.endpoint_id);
  if (!endpoint) throw notFound('webhooks', 'webhook endpoint');
  if (!endpoint.is_active) throw new ApiError('webhooks.endpoint_inactive', 'the endpoint is inactive; enable it first (webhooks-update with is_active: true)');
  const wanted = new Set(endpoint.events.filter((e) => !input.types || (input.types as string[]).includes(e)));
  const now = new Date();
  const until = input.until ?? now.toISOString();
  const stopAt = new Date(Date.parse(until) + LATE_APPEND_MS).toISOString();
  const createdAt = now.toISOString();

  let queued = 0;
  let batch: DeliveryRef[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const refs = batch;
    batch = [];
    await enqueueDeliveries(refs);
    await Promise.all(refs.map(markEnqueued));
  };
  for await (const entry of entriesFrom(ctx.accountId, input.since, (e) => e.at >= stopAt)) {
    if (!wanted.has(entry.event)) continue;
    const timestamp = (JSON.parse(entry.body) as { timestamp?: string }).timestamp ?? entry.at;
    if (timestamp < input.since || timestamp >= until) continue;
    const delivery = newDelivery({ accountId: ctx.accountId, endpointId: endpoint.id, eventId: entry.id, eventType: entry.event as DeliveryEventType, createdAt, body: entry.body, recordId: entry.record_id });
    const put = await putDelivery(delivery);
    if (!put.created) continue;
    batch.push(refOf(delivery));
    queued += 1;
    if (batch.length === 10) await flush();
  }
  await flush();
  return { queued };
}
