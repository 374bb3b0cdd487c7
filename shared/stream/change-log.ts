/**
 * The stream worker's side of the change log (contract §12): every record change that raises an
 * event gets the payload its webhooks receive (built once, same `id`), and the events are appended
 * through the domain's writer (shared/domain/change-log.ts), one account's in stream order, so one
 * record's events keep the order of its commits (the stream orders an item's records; shards are
 * read one batch at a time each).
 */
import type { RecordChange } from '../domain/record-change.js';
import { appendChangeEvents, type ChangeEvent } from '../domain/change-log.js';
import type { WebhookPayload } from '../schemas/webhooks.js';
import { eventAndPayload, type WebhookBatchCache } from '../webhooks/pipeline.js';

/**
 * Builds the payload of every change that raises an event and appends them to the log, one
 * account at a time in the given order (accounts in parallel). Returns the payloads by event id,
 * for the webhook deliveries of the same changes. Idempotent: a retried batch appends nothing twice.
 */
export async function logChanges(changes: RecordChange[], cache: WebhookBatchCache): Promise<Map<string, WebhookPayload>> {
  const payloads = new Map<string, WebhookPayload>();
  const events: ChangeEvent[] = [];
  cache.prefetchErased(changes);
  for (const change of changes) {
    const raised = await eventAndPayload(change, cache);
    if (!raised) continue;
    payloads.set(change.eventId, raised.payload);
    events.push({ accountId: change.accountId, eventId: change.eventId, event: raised.event, recordId: change.id, payload: raised.payload });
  }
  await appendChangeEvents(events);
  return payloads;
}
