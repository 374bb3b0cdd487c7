import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { applyChanges } from '../../shared/stream/changes.js';
import { changesQueueUrl, routeRecords } from '../../shared/stream/route.js';

/**
 * The table's stream consumer: it only routes. A batch's record changes go to the changes queue,
 * one message group per account (shared/stream/route.ts), where the changes worker does the
 * per-account work (functions/stream/changes.ts). Unbound (a tool or test running this handler
 * alone, without the queue) it does that work itself. On failure the earliest record not done is
 * reported (ReportBatchItemFailures), so the batch is retried from there.
 */
export const handler = instrumented('stream', async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const queueUrl = changesQueueUrl();
  const failed = queueUrl ? await routeRecords(event.Records, queueUrl) : await applyChanges(event.Records, '', (message, details) => logger.error(message, details));
  if (failed === undefined) return { batchItemFailures: [] };
  return { batchItemFailures: [{ itemIdentifier: event.Records[failed]?.dynamodb?.SequenceNumber ?? '' }] };
});
