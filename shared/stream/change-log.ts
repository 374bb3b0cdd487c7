/**
 * The stream worker's writer of the change log (contract §12): every record change that raises
 * an event is appended to its account's log with the payload its webhooks receive (built once,
 * same `id`). Changes of one account are appended in stream order, so one record's events keep
 * the order of its commits (the stream orders an item's records; shards are read one batch at a
 * time each). The log's positions and why a reader never skips one: shared/db/events.ts and
 * docs/data-model.md.
 */
import type { RecordChange } from '../db/changes.js';
import { appendEvents, type LogAppend } from '../db/events.js';
import type { WebhookPayload } from '../schemas/webhooks.js';
import { eventAndPayload, type WebhookBatchCache } from '../webhooks/pipeline.js';

/**
 * Builds the payload of every change that raises an event and appends them to the log, one
 * account at a time in the given order (accounts in parallel). Returns the payloads by event id,
 * for the webhook deliveries of the same changes. Idempotent: a retried batch appends nothing twice.
 */
export async function logChanges(changes: RecordChange[], cache: WebhookBatchCache): Promise<Map<string, WebhookPayload>> {
  const payloads = new Map<string, WebhookPayload>();
  const byAccount = new Map<string, LogAppend[]>();
  cache.prefetchErased(changes);
  for (const change of changes) {
    const raised = await eventAndPayload(change, cache);
    if (!raised) continue;
    const { event, payload } = raised;
    payloads.set(change.eventId, payload);
    const list = byAccount.get(change.accountId) ?? [];
    list.push({ id: change.eventId, event, recordId: change.id, body: JSON.stringify(payload) });
    byAccount.set(change.accountId, list);
  }
  await Promise.all([...byAccount].map(([accountId, events]) => appendEvents(accountId, events)));
  return payloads;
}
