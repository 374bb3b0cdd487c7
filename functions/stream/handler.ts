import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { toRecordChange } from '../../shared/db/changes.js';
import { applyProjections } from '../../shared/stream/fanout.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../../shared/webhooks/pipeline.js';

/** How many items' changes are worked on at once. */
const PARALLEL_ITEMS = 16;

async function handleRecord(record: DynamoDBRecord, webhooks: WebhookBatchCache): Promise<void> {
  const change = toRecordChange(record);
  if (!change) return;
  await applyProjections(change);
  await enqueueWebhookDeliveries(change, webhooks);
}

/**
 * The table's stream consumer. Changes of one item are handled in stream order; different items
 * in parallel. On failure the earliest failed record is reported (ReportBatchItemFailures), so
 * the batch is retried from there: nothing is skipped, and what is redone is idempotent.
 */
export const handler = instrumented('stream', async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const webhooks = new WebhookBatchCache();
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
          const record = event.Records[i]!;
          try {
            await handleRecord(record, webhooks);
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
