/**
 * The per-account work of record changes (the changes worker, functions/stream/changes.ts): the
 * change log's appends first (in the given order, per account), then each item's changes in
 * order (search entries, fan-out, cascades, webhook deliveries), different items in parallel.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { type RecordChange, toRecordChange } from '../db/changes.js';
import type { WebhookPayload } from '../schemas/webhooks.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../webhooks/pipeline.js';
import { logChanges } from './change-log.js';
import { FairSlots } from '../fair-slots.js';
import { applyProjections } from './fanout.js';

/** How many items' changes one batch works on at once (within the process's slots). */
const PARALLEL_ITEMS = 16;
/** How many items this process works on at once, every batch together. */
const PROCESS_ITEMS = 8;
/** How many of them one account may hold while another account is served (its items, every batch of it together). */
const PER_ACCOUNT_ITEMS = 4;
/** How long after another account's last change an account stays at that share (a quiet account writing every few seconds keeps the busy one at it). */
const SHARE_KEPT_MS = 10_000;
/**
 * The process's item slots, shared in turn between accounts, an account kept to
 * `PER_ACCOUNT_ITEMS` while another is served: locally every write goes to one DynamoDB Local,
 * which serves its requests in arrival order, so a quiet account's write waits behind every write
 * a busy one has in flight (docs/performance.md, "Fairness"; 16 slots let a quiet account's first
 * change after a bulk wait behind 16 of the busy one's items: 2.6 s against 2.0 s with 8). Deployed,
 * each Lambda instance holds one batch of one or a few accounts.
 */
const slots = new FairSlots(PROCESS_ITEMS, PER_ACCOUNT_ITEMS, SHARE_KEPT_MS);

/**
 * Applies the changes of `records` (stream order). Returns the index of the earliest record that
 * failed (it and everything after it must be redone: what is redone is idempotent, the log
 * appends an event id once), else undefined.
 */
/** Where the worker's failures are logged (the handler's logger: shared/stream sits below shared/http). */
export type ErrorLog = (message: string, details: Record<string, unknown>) => void;

export async function applyChanges(records: readonly DynamoDBRecord[], group: string, logError: ErrorLog): Promise<number | undefined> {
  const webhooks = new WebhookBatchCache();
  const changes = records.map((record) => toRecordChange(record));
  let payloads: Map<string, WebhookPayload>;
  try {
    payloads = await logChanges(changes.filter((c): c is RecordChange => c !== undefined), webhooks);
  } catch (error) {
    logError('change log append failed', { error });
    return records.length ? 0 : undefined;
  }
  const byItem = new Map<string, number[]>();
  records.forEach((record, i) => {
    const key = JSON.stringify(record.dynamodb?.Keys ?? i);
    byItem.set(key, [...(byItem.get(key) ?? []), i]);
  });
  const queues = [...byItem.values()];
  let firstFailed = Infinity;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL_ITEMS, queues.length) }, async () => {
      while (next < queues.length) {
        const queue = queues[next++]!;
        const release = await slots.acquire(group);
        try {
          for (const i of queue) {
            if (i > firstFailed) break;
            const change = changes[i];
            if (!change) continue;
            try {
              await applyProjections(change);
              await enqueueWebhookDeliveries(change, webhooks, undefined, payloads.get(change.eventId));
            } catch (error) {
              logError('stream record failed', { eventId: records[i]!.eventID, error });
              firstFailed = Math.min(firstFailed, i);
              break;
            }
          }
        } finally {
          release();
        }
      }
    }),
  );
  return firstFailed === Infinity ? undefined : firstFailed;
}
