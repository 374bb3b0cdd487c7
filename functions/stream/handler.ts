import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { type RecordChange, toRecordChange } from '../../shared/db/changes.js';
import { logChanges } from '../../shared/stream/change-log.js';
import { applyProjections } from '../../shared/stream/fanout.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../../shared/webhooks/pipeline.js';
import type { WebhookPayload } from '../../shared/schemas/webhooks.js';

/** How many items' changes are worked on at once. */
const PARALLEL_ITEMS = 16;

async function handleRecord(change: RecordChange | undefined, webhooks: WebhookBatchCache, payloads: Map<string, WebhookPayload>): Promise<void> {
  if (!change) return;
  await applyProjections(change);
  await enqueueWebhookDeliveries(change, webhooks, undefined, payloads.get(change.eventId));
}

/**
 * The table's stream consumer. First the batch's events are appended to the change log (in
 * stream order, per account); then the changes of one item are handled in stream order,
 * different items in parallel. On failure the earliest failed record is reported
 * (ReportBatchItemFailures), so the batch is retried from there: nothing is skipped, and what
 * is redone is idempotent (the log appends an event id once).
 */
export const handler = instrumented('stream', async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const webhooks = new WebhookBatchCache();
  const changes = event.Records.map((record) => toRecordChange(record));
  let payloads: Map<string, WebhookPayload>;
  try {
    payloads = await logChanges(changes.filter((c): c is RecordChange => c !== undefined), webhooks);
  } catch (error) {
    logger.error('change log append failed', { error: error as Error });
    const first = event.Records[0];
    return { batchItemFailures: first ? [{ itemIdentifier: first.dynamodb?.SequenceNumber ?? '' }] : [] };
  }
  const byItem = new Map<string, number[]>();
  event.Records.forEach((record, i) => {
    const key = JSON.stringify(record.dynamodb?.Keys ?? i);
    byItem.set(key, [...(byItem.get(key) ?? []), i]);
  });
  const queues = [...byItem.values()];
  let firstFailed = Infinity;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL_ITEMS, queues.length) }, async () => {
      while (next < queues.length) {
        for (const i of queues[next++]!) {
          if (i > firstFailed) break;
          const record: DynamoDBRecord = event.Records[i]!;
          try {
            await handleRecord(changes[i], webhooks, payloads);
          } catch (error) {
            logger.error('stream record failed', { eventId: record.eventID, error: error as Error });
            firstFailed = Math.min(firstFailed, i);
            break;
          }
        }
      }
    }),
  );
  if (firstFailed === Infinity) return { batchItemFailures: [] };
  return { batchItemFailures: [{ itemIdentifier: event.Records[firstFailed]!.dynamodb?.SequenceNumber ?? '' }] };
});
