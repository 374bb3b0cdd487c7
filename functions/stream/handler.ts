import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../../shared/http/logger.js';
import { toRecordChange } from '../../shared/stream/changes.js';
import { applyProjections } from '../../shared/stream/fanout.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../../shared/webhooks/pipeline.js';

/**
 * The table's stream consumer. Records are handled in order; on the first failure the rest of
 * the batch is reported failed (ReportBatchItemFailures), so nothing is skipped and a retried
 * batch redoes only idempotent work.
 */
export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const webhooks = new WebhookBatchCache();
  for (const record of event.Records) {
    try {
      const change = toRecordChange(record);
      if (!change) continue;
      await applyProjections(change);
      await enqueueWebhookDeliveries(change, webhooks);
    } catch (error) {
      logger.error('stream record failed', { eventId: record.eventID, error: error as Error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
};
